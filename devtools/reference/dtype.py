# Reference outputs of Hugging Face transformers for 16-bit checkpoints (bfloat16, float16), which
# services/worker/runtime/dtype-reference.spec.ts compares our engine against.
#
# Run from the repository root (after `npm ci`; needs torch and transformers, CPU is enough):
#
#     python3 devtools/reference/dtype.py
#
# It writes devtools/reference/expected/dtype.json. Each case makes a tiny checkpoint with the model
# factory (`tessera model create --arch A --preset tiny --seed S --dtype D`: the same bytes as the
# spec makes) and decodes greedily twice from the same weights:
#   "as_saved": loaded with dtype="auto", i.e. in the dtype config.json and the safetensors say, and
#       run as transformers runs it on CPU: every op in that dtype (bfloat16 or float16 matmuls, whose
#       results, activations and logits are rounded to 16 bits), RMSNorm's variance in float32.
#       Recorded: output_ids (greedy, one forward over the prompt, then one token per forward with the
#       cache, never stopping at eos) and the top 3 [id, logit] of every step.
#   "float32": the same 16-bit weights widened to float32 (model.float()), teacher-forced on the
#       as_saved output_ids: the top 3 [id, logit] of every step and the first 16 logits after the
#       prompt. This is the computation our engine does (16-bit weights, float32 arithmetic), so the
#       spec holds our logits to 1e-3 of these, and our greedy ids to as_saved's except at its
#       near-ties (top 2 within 1e-3 relative).

import json
import os
import random
import subprocess
import sys
import tempfile

# This folder holds a tokenizers.py (another topic's script), which would shadow the tokenizers
# package transformers imports: drop the script's folder from the import path.
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "devtools", "reference", "expected", "dtype.json")
NEW_TOKENS = 24
VOCAB = 512  # the tiny preset's

CASES = [
    {"name": "llama-bfloat16", "arch": "llama", "seed": 201, "dtype": "bfloat16", "prompt_lengths": [20, 7]},
    {"name": "qwen2-bfloat16", "arch": "qwen2", "seed": 202, "dtype": "bfloat16", "prompt_lengths": [20]},
    {"name": "llama-float16", "arch": "llama", "seed": 203, "dtype": "float16", "prompt_lengths": [20, 7]},
    {"name": "mixtral-float16", "arch": "mixtral", "seed": 204, "dtype": "float16", "prompt_lengths": [20]},
]


def make_checkpoint(case, out):
    subprocess.run(
        ["node", "services/cli/main.ts", "model", "create", "--arch", case["arch"], "--preset", "tiny",
         "--seed", str(case["seed"]), "--dtype", case["dtype"], "--out", out],
        cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
    )


def prompt_ids(seed, length):
    rng = random.Random(seed * 1000 + length)
    return [rng.randrange(3, VOCAB) for _ in range(length)]


def top3(logits):
    values, ids = torch.topk(logits.float(), 3)
    return [[int(i), float(v)] for i, v in zip(ids, values)]


def load(model_dir, dtype):
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype, attn_implementation="eager")
    model.eval()
    return model


@torch.no_grad()
def greedy(model, ids):
    out = model(input_ids=torch.tensor([ids]), use_cache=True)
    past, logits = out.past_key_values, out.logits[0, -1]
    output_ids, steps = [], []
    for _ in range(NEW_TOKENS):
        steps.append(top3(logits))
        token = int(torch.argmax(logits))
        output_ids.append(token)
        out = model(input_ids=torch.tensor([[token]]), past_key_values=past, use_cache=True)
        past, logits = out.past_key_values, out.logits[0, -1]
    return {"output_ids": output_ids, "steps_top3": steps}


@torch.no_grad()
def teacher_forced(model, ids, output_ids):
    out = model(input_ids=torch.tensor([ids + output_ids[:-1]]))
    logits = out.logits[0, len(ids) - 1 :]
    return {
        "steps_top3": [top3(row) for row in logits],
        "last_prompt_logits_head": [float(x) for x in logits[0, :16]],
    }


def main():
    torch.manual_seed(0)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            out = os.path.join(tmp, case["name"])
            make_checkpoint(case, out)
            as_saved = load(out, "auto")
            assert as_saved.dtype == getattr(torch, case["dtype"]), as_saved.dtype
            widened = load(out, "auto").float()
            prompts = []
            for length in case["prompt_lengths"]:
                ids = prompt_ids(case["seed"], length)
                saved = greedy(as_saved, ids)
                f32 = teacher_forced(widened, ids, saved["output_ids"])
                prompts.append({"prompt_ids": ids, "as_saved": saved, "float32": f32})
                print(f"{case['name']}: prompt {length}: {saved['output_ids']}", file=sys.stderr)
            cases.append({k: case[k] for k in ("name", "arch", "seed", "dtype")} | {"prompts": prompts})
    result = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "preset": "tiny",
        "new_tokens": NEW_TOKENS,
        "cases": cases,
    }
    with open(OUT, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
