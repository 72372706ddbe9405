"""The official `openai` Python client asking `tessera router` for structured outputs, for
e2e/router/router-structured.spec.ts. Reads one JSON request on stdin:

    {"base_url": "http://127.0.0.1:PORT/v1", "model": "...", "max_tokens": N,
     "schemas": [{...}, ...], "count": 200, "concurrency": 16}

sends `count` chat completions with response_format json_schema (schema i % len(schemas), strict on
every other one, temperature 1, seed i) `concurrency` at a time, plus json_object, guided_choice and
guided_regex requests and two that must be refused, and prints one JSON object: every completion's
text, finish reason and schema index; whether Python's `jsonschema` validated them ("validator":
"jsonschema", with its verdict per completion) or was not installed ("validator": null: the spec then
validates them itself); and the refusals' status codes and messages.
"""

import json
import sys
from concurrent.futures import ThreadPoolExecutor

import openai

try:
    import jsonschema
except ImportError:  # the spec validates in Node instead
    jsonschema = None


def main():
    request = json.load(sys.stdin)
    client = openai.OpenAI(base_url=request["base_url"], api_key="none", max_retries=0, timeout=120)
    model = request["model"]
    schemas = request["schemas"]
    max_tokens = request["max_tokens"]
    messages = [{"role": "user", "content": "Describe one item as JSON."}]

    def schema_completion(i):
        schema = schemas[i % len(schemas)]
        chat = client.chat.completions.create(
            model=model,
            messages=messages,
            max_tokens=max_tokens,
            temperature=1,
            seed=i,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": f"item_{i % len(schemas)}", "schema": schema, "strict": i % 2 == 0},
            },
        )
        choice = chat.choices[0]
        text = choice.message.content
        verdict = None
        if jsonschema is not None and choice.finish_reason == "stop":
            try:
                jsonschema.validate(json.loads(text), schema)
                verdict = "valid"
            except (json.JSONDecodeError, jsonschema.ValidationError) as err:
                verdict = f"invalid: {err}"[:300]
        return {"schema": i % len(schemas), "text": text, "finish_reason": choice.finish_reason, "verdict": verdict}

    # The first completion goes alone: the openai client's pydantic response models are built lazily
    # on first use, and 16 threads doing that at once can fail inside pydantic ("BaseModel cannot be
    # instantiated directly", seen once in CI with openai 3.22 and pydantic 2.13) -- a client-side race,
    # not the server's answer. The other completions then run `concurrency` at a time.
    completions = [schema_completion(0)]
    with ThreadPoolExecutor(max_workers=request["concurrency"]) as pool:
        completions += list(pool.map(schema_completion, range(1, request["count"])))

    json_object = client.chat.completions.create(
        model=model, messages=messages, max_tokens=max_tokens, temperature=1, seed=3,
        response_format={"type": "json_object"},
    ).choices[0]
    choice = client.completions.create(
        model=model, prompt="Is it raining?", max_tokens=8, temperature=1, seed=4,
        extra_body={"guided_choice": ["yes", "no", "not sure"]},
    ).choices[0]
    regex = client.chat.completions.create(
        model=model, messages=messages, max_tokens=16, temperature=1, seed=5,
        extra_body={"guided_regex": "[A-Z][a-z]{1,5}-[0-9]{2}"},
    ).choices[0]

    refusals = []
    for extra in (
        {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "strin"}}}},
        {"guided_regex": "(unclosed"},
        {"guided_grammar": "root ::= undefined_rule"},
        {"guided_choice": ["a"], "guided_regex": "a"},
    ):
        try:
            client.chat.completions.create(model=model, messages=messages, max_tokens=4, extra_body=extra)
            refusals.append({"status": 200, "message": ""})
        except openai.APIStatusError as err:
            body = err.body if isinstance(err.body, dict) else {}
            refusals.append({"status": err.status_code, "message": str(body.get("message", err)),
                             "param": body.get("param")})

    json.dump(
        {
            "validator": "jsonschema" if jsonschema is not None else None,
            "completions": completions,
            "json_object": {"text": json_object.message.content, "finish_reason": json_object.finish_reason},
            "choice": {"text": choice.text, "finish_reason": choice.finish_reason},
            "regex": {"text": regex.message.content, "finish_reason": regex.finish_reason},
            "refusals": refusals,
        },
        sys.stdout,
    )


main()
