"""The official `openai` Python client against a Tessera router's Batch API (e2e/batch/router-batch.spec.ts).

  openai_batch.py create BASE_URL FILE ENDPOINT  -> prints {"file": ..., "batch": ...}
  openai_batch.py wait BASE_URL BATCH_ID         -> polls until the batch ends, prints {"batch": ..., "output": [...], "errors": [...]}
"""
import json
import sys
import time

from openai import OpenAI


def client(base):
    return OpenAI(base_url=f"{base}/v1", api_key="none", max_retries=0)


def create(base, path, endpoint):
    c = client(base)
    with open(path, "rb") as f:
        uploaded = c.files.create(file=f, purpose="batch")
    assert c.files.retrieve(uploaded.id).bytes == uploaded.bytes
    batch = c.batches.create(input_file_id=uploaded.id, endpoint=endpoint, completion_window="24h")
    print(json.dumps({"file": uploaded.model_dump(), "batch": batch.model_dump()}))


def wait(base, batch_id):
    c = client(base)
    deadline = time.time() + 240
    while True:
        batch = c.batches.retrieve(batch_id)
        if batch.status in ("completed", "failed", "cancelled", "expired"):
            break
        if time.time() > deadline:
            raise SystemExit(f"batch {batch_id} still {batch.status}")
        time.sleep(0.2)
    lines = lambda file_id: [json.loads(l) for l in c.files.content(file_id).text.splitlines() if l] if file_id else []
    listed = [b.id for b in c.batches.list(limit=100).data]
    print(json.dumps({
        "batch": batch.model_dump(),
        "output": lines(batch.output_file_id),
        "errors": lines(batch.error_file_id),
        "listed": batch_id in listed,
    }))


if __name__ == "__main__":
    {"create": create, "wait": wait}[sys.argv[1]](*sys.argv[2:])
