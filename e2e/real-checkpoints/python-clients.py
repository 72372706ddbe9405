"""The official `openai` Python client and Python `grpcio` against a running `tessera router`, for
e2e/real-checkpoints/real-checkpoints.spec.ts. Reads one JSON request on stdin:

    {"base_url": "http://127.0.0.1:PORT/v1", "grpc_address": "127.0.0.1:PORT", "model": "...",
     "max_tokens": 12, "chats": [[{"role": ..., "content": ...}, ...], ...],
     "completion_prompt": "...", "tokenize_text": "..."}

and prints one JSON object: each chat's usage.prompt_tokens, reply text and finish reason
(/v1/chat/completions, temperature 0), the first chat's reply streamed (the deltas joined), the completion's (/v1/completions), and the token ids
tessera.v1.Inference/Tokenize returns over grpcio (special tokens added). grpcio has no generated stubs
here (no protoc): the two small messages are written and read by hand, in protobuf's wire format.
"""

import json
import sys

import grpc
import openai


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def read_varint(data, i):
    shift = value = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def tokenize_request(model, text):
    """TokenizeRequest{model = 1, text = 2, add_special_tokens = 3: true}."""
    model_bytes, text_bytes = model.encode(), text.encode()
    return (
        varint(1 << 3 | 2) + varint(len(model_bytes)) + model_bytes
        + varint(2 << 3 | 2) + varint(len(text_bytes)) + text_bytes
        + varint(3 << 3 | 0) + varint(1)
    )


def token_ids(response):
    """TokenizeResponse.token_ids (field 1, repeated uint32, packed or not); other fields skipped."""
    ids, i = [], 0
    while i < len(response):
        key, i = read_varint(response, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = read_varint(response, i)
            if field == 1:
                ids.append(value)
        elif wire == 2:
            length, i = read_varint(response, i)
            end = i + length
            if field == 1:
                while i < end:
                    value, i = read_varint(response, i)
                    ids.append(value)
            i = end
        else:
            raise ValueError(f"unexpected wire type {wire}")
    return ids


def main():
    request = json.load(sys.stdin)
    client = openai.OpenAI(base_url=request["base_url"], api_key="none", max_retries=0)
    model, max_tokens = request["model"], request["max_tokens"]
    chats = []
    for messages in request["chats"]:
        reply = client.chat.completions.create(
            model=model, messages=messages, temperature=0, max_tokens=max_tokens
        )
        chats.append(
            {
                "prompt_tokens": reply.usage.prompt_tokens,
                "completion_tokens": reply.usage.completion_tokens,
                "text": reply.choices[0].message.content,
                "finish_reason": reply.choices[0].finish_reason,
            }
        )
    # The first conversation again, streamed: the deltas must add up to the same reply.
    stream = client.chat.completions.create(
        model=model, messages=request["chats"][0], temperature=0, max_tokens=max_tokens, stream=True
    ) if request["chats"] else []
    streamed = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    completion = client.completions.create(
        model=model, prompt=request["completion_prompt"], temperature=0, max_tokens=max_tokens
    )
    with grpc.insecure_channel(request["grpc_address"]) as channel:
        tokenize = channel.unary_unary("/tessera.v1.Inference/Tokenize")
        response = tokenize(tokenize_request(model, request["tokenize_text"]), timeout=30)
    json.dump(
        {
            "openai_version": openai.__version__,
            "grpcio_version": grpc.__version__,
            "chats": chats,
            "streamed_first_chat": streamed,
            "completion": {
                "prompt_tokens": completion.usage.prompt_tokens,
                "text": completion.choices[0].text,
                "finish_reason": completion.choices[0].finish_reason,
            },
            "tokenize_ids": token_ids(response),
        },
        sys.stdout,
        ensure_ascii=False,
    )


if __name__ == "__main__":
    main()
