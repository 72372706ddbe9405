"""The official `openai` Python client against a running `tessera router`, for
e2e/router/router-sampling-params.spec.ts: n, best_of, logit_bias, echo and prompt_logprobs. Reads one
JSON request on stdin:

    {"base_url": "http://127.0.0.1:PORT/v1", "model": "...", "step": "n4" | "rest" | "cases",
     "prompt": "...", "forced_id": 77, "vocab_size": 512, "cases": [{completion fields}, ...]}

and prints one JSON object with what each call returned (the spec checks it). Step "n4" makes only the
n=4 completion, so the spec can read the worker's prompt-token counters around it.
"""

import json
import sys

import openai


def choices_of(completion):
    return [
        {"index": c.index, "text": c.text, "finish_reason": c.finish_reason}
        for c in completion.choices
    ]


def main():
    request = json.load(sys.stdin)
    client = openai.OpenAI(base_url=request["base_url"], api_key="none", max_retries=0)
    model, prompt = request["model"], request["prompt"]
    if request["step"] == "cases":
        # Each case: OpenAI fields, and vLLM's under "extra_body" as the Python client sends them.
        answers = []
        for case in request["cases"]:
            c = client.completions.create(model=model, prompt=prompt, **case)
            answers.append({
                "text": c.choices[0].text,
                "finish_reason": c.choices[0].finish_reason,
                "completion_tokens": c.usage.completion_tokens,
            })
        print(json.dumps({"cases": answers}))
        return
    sampled = {"temperature": 1, "seed": 7, "max_tokens": 8, "extra_body": {"ignore_eos": True}}
    out = {}
    if request["step"] == "n4":
        c = client.completions.create(model=model, prompt=prompt, n=4, **sampled)
        out["n4"] = {"choices": choices_of(c), "usage": c.usage.model_dump()}
        print(json.dumps(out))
        return

    # Streamed: the chunks of each choice, by index, joined.
    stream = client.completions.create(
        model=model, prompt=prompt, n=4, stream=True, stream_options={"include_usage": True}, **sampled
    )
    texts, usage = {}, None
    for chunk in stream:
        for c in chunk.choices:
            texts[c.index] = texts.get(c.index, "") + c.text
        if chunk.usage is not None:
            usage = chunk.usage.model_dump()
    out["n4_streamed"] = {"texts": [texts[i] for i in sorted(texts)], "usage": usage}

    chat = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": prompt}], n=4, **sampled
    )
    out["chat_n4"] = {
        "choices": [{"index": c.index, "text": c.message.content} for c in chat.choices],
        "usage": chat.usage.model_dump(),
    }

    best = client.completions.create(model=model, prompt=prompt, best_of=3, **sampled)
    out["best_of"] = {"choices": choices_of(best), "usage": best.usage.model_dump()}

    forced = str(request["forced_id"])
    biased = client.completions.create(
        model=model, prompt=prompt, logit_bias={forced: 100}, logprobs=1, **sampled
    )
    out["logit_bias"] = {
        "text": biased.choices[0].text,
        "token_logprobs": biased.choices[0].logprobs.token_logprobs,
    }

    echoed = client.completions.create(
        model=model, prompt=prompt, echo=True, logprobs=1, max_tokens=4, temperature=0
    )
    lp = echoed.choices[0].logprobs
    out["echo"] = {
        "text": echoed.choices[0].text,
        "tokens": lp.tokens,
        "token_logprobs": lp.token_logprobs,
        "usage": echoed.usage.model_dump(),
    }

    with_prompt = client.completions.create(
        model=model, prompt=prompt, max_tokens=2, temperature=0, extra_body={"prompt_logprobs": 1}
    )
    out["prompt_logprobs"] = (with_prompt.choices[0].model_extra or {}).get("prompt_logprobs")
    chat_prompt = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": prompt}],
        max_tokens=2,
        temperature=0,
        extra_body={"prompt_logprobs": 0},
    )
    out["chat_prompt_logprobs"] = (chat_prompt.model_extra or {}).get("prompt_logprobs")

    try:
        client.completions.create(
            model=model, prompt=prompt, max_tokens=2, logit_bias={str(request["vocab_size"]): 5}
        )
        out["bad_bias"] = "accepted"
    except openai.BadRequestError as err:
        out["bad_bias"] = {"status": err.status_code, "message": str(err)}
    print(json.dumps(out))


main()
