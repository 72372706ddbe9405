"""Tool-call round trips through a running `tessera router` with the official `openai` Python client, for
e2e/router/router-tools.spec.ts. Reads one JSON request on stdin:

    {"base_url": "http://127.0.0.1:PORT/v1", "models": ["..."], "tools": [...],
     "choices": [<tool_choice>, ...], "question": "...", "result": "...", "max_tokens": 64}

and, for every model, tool_choice and stream (false, true), runs a round trip: the question with the
tools and that tool_choice (parallel_tool_calls false) -> the assistant's tool_calls -> those calls
and a `tool` message answering each fed back, with tool_choice "auto" -> the final reply. Prints one JSON
list, one entry per round trip: what the client saw (the calls as the SDK parsed or assembled them, the
finish reasons, the usage; for streams, the fields of each call's first delta and how many argument
chunks followed). The spec checks them.
"""

import json
import sys

import openai


def call_dict(call):
    return {"id": call.id, "type": call.type, "name": call.function.name, "arguments": call.function.arguments}


def whole(client, **params):
    reply = client.chat.completions.create(**params)
    choice = reply.choices[0]
    return {
        "content": choice.message.content,
        "tool_calls": [call_dict(c) for c in choice.message.tool_calls or []],
        "finish_reason": choice.finish_reason,
        "prompt_tokens": reply.usage.prompt_tokens,
    }


def streamed(client, **params):
    """The deltas assembled as an OpenAI client does: content joined, calls by index."""
    content, calls, firsts, finish, prompt_tokens = "", {}, [], None, None
    stream = client.chat.completions.create(**params, stream=True, stream_options={"include_usage": True})
    for chunk in stream:
        if chunk.usage is not None:
            prompt_tokens = chunk.usage.prompt_tokens
        if not chunk.choices:
            continue
        choice = chunk.choices[0]
        delta = choice.delta
        content += delta.content or ""
        for d in delta.tool_calls or []:
            if d.index not in calls:
                firsts.append(
                    {"index": d.index, "id": d.id, "type": d.type, "name": d.function.name if d.function else None}
                )
                calls[d.index] = {"id": d.id, "type": d.type, "name": d.function.name, "arguments": "", "chunks": 0}
            if d.function and d.function.arguments:
                calls[d.index]["arguments"] += d.function.arguments
                calls[d.index]["chunks"] += 1
        if choice.finish_reason is not None:
            finish = choice.finish_reason
    ordered = [calls[i] for i in sorted(calls)]
    return {
        "content": content if content or not ordered else None,
        "tool_calls": [{k: c[k] for k in ("id", "type", "name", "arguments")} for c in ordered],
        "argument_chunks": [c["chunks"] for c in ordered],
        "first_deltas": firsts,
        "finish_reason": finish,
        "prompt_tokens": prompt_tokens,
    }


def round_trip(client, request, model, choice, stream):
    ask = streamed if stream else whole
    messages = [{"role": "user", "content": request["question"]}]
    common = {"model": model, "tools": request["tools"], "max_tokens": request["max_tokens"], "temperature": 0}
    first = ask(client, messages=messages, tool_choice=choice, parallel_tool_calls=False, **common)
    messages.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in first["tool_calls"]
            ],
        }
    )
    for c in first["tool_calls"]:
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": request["result"]})
    final = ask(client, messages=messages, tool_choice="auto", **{**common, "max_tokens": 8})
    return {"model": model, "tool_choice": choice, "stream": stream, "call": first, "reply": final}


def main():
    request = json.load(sys.stdin)
    client = openai.OpenAI(base_url=request["base_url"], api_key="none", max_retries=0)
    trips = [
        round_trip(client, request, model, choice, stream)
        for model in request["models"]
        for choice in request["choices"]
        for stream in (False, True)
    ]
    json.dump({"openai_version": openai.__version__, "trips": trips}, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
