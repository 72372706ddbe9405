// The training text for the tokenizers of generated checkpoints: a few varied documents of English
// prose, dialogue, code (Python, TypeScript, Go, shell, SQL) and data (JSON, YAML, Markdown), written for
// this project. It is embedded so that training needs no download and is the same on every machine.
// Changing it changes every generated tokenizer (and so the byte-identity of generated checkpoints).

export const CORPUS: readonly string[] = [
  `The lighthouse at the end of the harbour was built in 1874, when the town still lived from fishing.
For more than a hundred years a keeper climbed the one hundred and twelve steps every evening to light
the lamp, wind the clockwork that turned the lens, and write the weather into a thick leather book.
The books are kept in the library now. Most entries are short: "Wind from the west, strong. Rain at
night. Two boats came in late." Some are longer. In the winter of 1911 the keeper wrote that the sea
had frozen along the shore for the first time in living memory, and that children walked out onto the
ice to look back at the town. The last keeper left in 1986, when the light was made automatic. People
still walk along the pier in the evening to watch it turn, and on clear nights you can see it from the
hills twenty miles away.`,

  `A distributed system is a collection of independent computers that appears to its users as a single
coherent system. That definition sounds simple, but every word hides a problem. The computers are
independent, so any of them can fail while the others keep running. They communicate over a network,
so messages can be delayed, duplicated, reordered or lost. And they must appear to be a single system,
so the failures have to be hidden, or at least made understandable, to the people who use it.

Serving a large language model is a good example. The model's weights may not fit on one machine, so
the layers are split across several workers. A request arrives at a gateway, which tokenizes the prompt
and sends the hidden states through each worker in turn. The first worker computes the first layers
and passes its output to the next one; the last worker produces the logits, and the gateway samples
the next token. Then the whole pipeline runs again for the token after that. If one worker is slow,
every request waits for it. If one worker crashes, the gateway has to notice, route around it, and
either retry the request or return a clear error. Caching the attention keys and values makes each
step cheaper, but the cache has to live somewhere, and it has to be freed when the request ends.`,

  `Simple tomato soup (serves four)

Ingredients: 1 kg ripe tomatoes, 2 onions, 3 cloves of garlic, 2 tablespoons of olive oil, 750 ml of
vegetable stock, a handful of fresh basil, salt and black pepper.

1. Chop the onions and the garlic. Warm the oil in a large pot over a medium heat.
2. Cook the onions for about ten minutes, until they are soft but not brown. Add the garlic and cook
   for one more minute.
3. Cut the tomatoes into quarters and add them to the pot with the stock. Bring it to the boil, then
   lower the heat and let it simmer for twenty-five minutes.
4. Blend the soup until it is smooth. Season with salt and pepper, tear in the basil, and serve it
   hot with bread. It keeps for three days in the fridge, and it freezes well.`,

  `"Are you sure this is the right road?" asked Mara, looking at the map again.
"No," said her brother. "But it is the only road, so it must be the right one."
They drove on in silence. The fields gave way to a forest, and the forest to a valley with a river at
the bottom. It was almost dark when they saw the house: small, white, with a light in one window.
"Somebody is waiting for us," Mara said.
"Somebody is always waiting for somebody," he answered, and he stopped the car.
An old woman opened the door before they could knock. "You are late," she said, "but not too late.
Come in, the tea is still warm." They looked at each other, and then they followed her inside.`,

  `import json
import math
from dataclasses import dataclass, field


@dataclass
class Config:
    hidden_size: int = 768
    num_layers: int = 12
    num_heads: int = 12
    vocab_size: int = 32000
    dropout: float = 0.0
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_file(cls, path: str) -> "Config":
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
        return cls(**data)


def softmax(values: list[float]) -> list[float]:
    """Return the softmax of a list of numbers, computed in a numerically stable way."""
    if not values:
        return []
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    total = sum(exps)
    return [e / total for e in exps]


class Tokenizer:
    def __init__(self, vocab: dict[str, int]):
        self.vocab = vocab
        self.inverse = {i: t for t, i in vocab.items()}

    def encode(self, text: str) -> list[int]:
        ids = []
        for word in text.split():
            if word in self.vocab:
                ids.append(self.vocab[word])
            else:
                ids.append(self.vocab["<unk>"])
        return ids

    def decode(self, ids: list[int]) -> str:
        return " ".join(self.inverse.get(i, "<unk>") for i in ids)


if __name__ == "__main__":
    config = Config()
    print(f"hidden={config.hidden_size} layers={config.num_layers}")
    print(softmax([1.0, 2.0, 3.0]))
`,

  `import { readFile } from "node:fs/promises";

export interface Request {
  id: string;
  prompt: string;
  maxTokens: number;
  temperature?: number;
}

export class Queue<T> {
  private readonly items: T[] = [];

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    return this.items.shift();
  }

  get length(): number {
    return this.items.length;
  }
}

export async function loadConfig(path: string): Promise<Record<string, unknown>> {
  const text = await readFile(path, "utf8");
  const config = JSON.parse(text) as Record<string, unknown>;
  if (typeof config.model !== "string") {
    throw new Error("config: model must be a string");
  }
  return config;
}

export function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) {
    if (values[i] > values[best]) best = i;
  }
  return best;
}

const queue = new Queue<Request>();
queue.push({ id: "req-1", prompt: "Hello, world!", maxTokens: 16 });
console.log(queue.length, argmax(new Float32Array([0.1, 0.7, 0.2])));
`,

  `package main

import (
	"fmt"
	"net/http"
	"time"
)

type Server struct {
	addr    string
	timeout time.Duration
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	fmt.Fprintf(w, "ok\\n")
}

func main() {
	s := &Server{addr: ":8080", timeout: 30 * time.Second}
	http.HandleFunc("/v1/completions", s.handle)
	if err := http.ListenAndServe(s.addr, nil); err != nil {
		fmt.Println("error:", err)
	}
}
`,

  `{
  "model": "tiny-llama",
  "max_tokens": 128,
  "temperature": 0.7,
  "top_p": 0.95,
  "stop": ["</s>", "\\n\\n"],
  "messages": [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "The capital of France is Paris."}
  ],
  "stream": true,
  "seed": 1234
}`,

  `apiVersion: apps/v1
kind: Deployment
metadata:
  name: inference-worker
  namespace: default
  labels:
    app: worker
spec:
  replicas: 3
  selector:
    matchLabels:
      app: worker
  template:
    metadata:
      labels:
        app: worker
    spec:
      containers:
        - name: worker
          image: registry.example.com/worker:0.1.0
          ports:
            - containerPort: 50051
              name: grpc
          resources:
            requests:
              cpu: "2"
              memory: 4Gi
            limits:
              memory: 8Gi
          readinessProbe:
            grpc:
              port: 50051
            periodSeconds: 5
`,

  `#!/usr/bin/env bash
set -euo pipefail

MODEL_DIR="\${1:-./models/tiny}"
OUT="\${2:-./out}"

mkdir -p "$OUT"
for file in "$MODEL_DIR"/*.json; do
  name="$(basename "$file")"
  echo "copying $name"
  cp "$file" "$OUT/$name"
done

if [ ! -f "$OUT/config.json" ]; then
  echo "error: no config.json in $MODEL_DIR" >&2
  exit 1
fi
du -sh "$OUT"
`,

  `CREATE TABLE requests (
  id          BIGSERIAL PRIMARY KEY,
  model       TEXT NOT NULL,
  prompt      TEXT NOT NULL,
  tokens_in   INTEGER NOT NULL DEFAULT 0,
  tokens_out  INTEGER NOT NULL DEFAULT 0,
  created_at  TIMESTAMP WITH TIME ZONE DEFAULT now()
);

SELECT model, count(*) AS total, avg(tokens_out) AS mean_tokens
FROM requests
WHERE created_at > now() - interval '1 day'
GROUP BY model
ORDER BY total DESC
LIMIT 10;
`,

  `# Getting started

This guide shows how to run a small model on your laptop and send it a first request.

## Requirements

- Node.js 24 or newer
- About 2 GB of free memory
- A terminal

## Steps

1. Install the dependencies with \`npm install\`.
2. Create a model: \`tessera model create --arch llama --preset tiny --out ./models/tiny\`.
3. Start the server and open a second terminal.
4. Send a request with \`curl\` and read the answer.

> **Note:** the generated models have random weights. They produce text, but the text means nothing.
> They are meant for testing the serving stack, not for answering questions.

| Preset | Layers | Hidden size | Parameters |
|--------|--------|-------------|------------|
| tiny   | 2      | 96          | 0.3 M      |
| small  | 4      | 256         | 4 M        |
| base   | 12     | 768         | 88 M       |
`,

  `Frequently asked questions

Why is the first request slower than the next ones? Because the weights are loaded lazily, and the
operating system has to read them from disk the first time. Later requests find them in memory.

Can I run several models at once? Yes. Each model gets its own workers, and the gateway routes each
request by the model name. Make sure the machine has enough memory for all of them.

What happens when a worker dies during a request? The gateway notices that the stream has broken,
marks the worker as unhealthy, and returns an error to the client. The client may retry; a new worker
will be scheduled by the operator within a few seconds.

How many tokens per second should I expect? It depends on the model size, the number of workers, the
network between them and the batch size. On a laptop, a tiny model produces thousands of tokens per
second; a base model, a few dozen.`,

  `Travel notes. We left Zürich early on Monday and reached Milano before lunch. The café near the
station served the best espresso of the whole trip — strong, short and a little bitter. On Wednesday
we flew to São Paulo, where it was 31 °C and raining. My friend, who is rather naïve about weather,
had packed only a jacket. “It is summer there,” I told him, “not winter.” He laughed and bought an
umbrella. In Tokyo (東京) a month later we ate ramen at midnight; the bill was ¥1,200 for two bowls.
Distances: 9,500 km, 18,000 km, 11,000 km. Total: roughly 38,500 km and far too many airports. 🚀✈️`,

  `Numbers and dates come in many forms: 0, 1, 2, 3, 10, 42, 100, 256, 1024, 65536, 3.14159, 2.71828,
-1, -0.5, 1e-6, 6.02e23, 0x1F, 0b1010, 50%, $19.99, €5, 12:30, 2024-03-15, 15/03/2024, March 15, 2024,
the 1st, 2nd, 3rd and 4th of July, version 1.2.3, v2.0.0-rc.1, IPv4 192.168.0.1, port 8080.
Phone: +1 (555) 010-0199. Email: someone@example.com. URL: https://example.com/docs?page=2&lang=en.`,

  `<|im_start|>system
You are a friendly assistant who answers briefly.<|im_end|>
<|im_start|>user
Can you explain what a tokenizer does?<|im_end|>
<|im_start|>assistant
A tokenizer splits text into small pieces called tokens and maps each piece to a number. The model
only ever sees the numbers. Common words usually become a single token, while rare words are split
into several pieces.<|im_end|>
<|im_start|>user
And what is a merge in byte pair encoding?<|im_end|>
<|im_start|>assistant
Training starts from single bytes. It counts which pair of neighbouring tokens appears most often,
merges that pair into a new token, and repeats until the vocabulary is large enough. The list of
merges, in order, is what the tokenizer applies later to new text.<|im_end|>`,

  `The history of printing is also a history of errors. Early printers set every letter by hand, and a
tired worker could easily put a "u" where an "n" belonged. Proofreaders read every page before the
sheets were printed, but some mistakes survived anyway, and collectors now pay high prices for books
that contain them. When computers took over typesetting, the errors changed their shape: instead of
a wrong letter there was a wrong font, a missing line, or a paragraph repeated twice. Today most text
is never printed at all. It is written, copied, translated and summarised by programs, and the errors,
when they appear, are harder to notice because the sentences around them still read so smoothly.

Gardeners say that the best time to plant a tree was twenty years ago, and the second best time is
now. The same is true of writing tests for software. A project without tests feels fast at the
beginning, because nothing slows it down. Then, one day, a small change breaks something far away,
and nobody notices until a user complains. After that, every change feels dangerous, and the project
becomes slow for a different reason. Good tests are small, quick and precise; they describe what the
code should do, they fail for one reason only, and they run on every commit.`,

  `class Matrix:
    def __init__(self, rows: int, cols: int, fill: float = 0.0):
        self.rows = rows
        self.cols = cols
        self.data = [[fill] * cols for _ in range(rows)]

    def __matmul__(self, other: "Matrix") -> "Matrix":
        if self.cols != other.rows:
            raise ValueError(f"shape mismatch: {self.cols} != {other.rows}")
        out = Matrix(self.rows, other.cols)
        for i in range(self.rows):
            for j in range(other.cols):
                total = 0.0
                for k in range(self.cols):
                    total += self.data[i][k] * other.data[k][j]
                out.data[i][j] = total
        return out

    def transpose(self) -> "Matrix":
        out = Matrix(self.cols, self.rows)
        for i in range(self.rows):
            for j in range(self.cols):
                out.data[j][i] = self.data[i][j]
        return out


def rms_norm(x: list[float], weight: list[float], eps: float = 1e-6) -> list[float]:
    mean_square = sum(v * v for v in x) / len(x)
    scale = 1.0 / math.sqrt(mean_square + eps)
    return [v * scale * w for v, w in zip(x, weight)]
`,
];
