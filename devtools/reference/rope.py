# Reference outputs of Hugging Face transformers for rope scaling (yarn, dynamic NTK) and the sliding
# window (Mistral's, Qwen2's), which services/worker/arch/rope.spec.ts, runtime/rope-reference.spec.ts,
# engine/engine-rope.spec.ts and parallel/sharded-rope.spec.ts compare our engine against.
#
# Run from the repository root (after `npm ci`; needs torch and transformers, CPU is enough):
#
#     python3 devtools/reference/rope.py
#
# It writes devtools/reference/expected/rope.json. Each case makes a tiny checkpoint with the model
# factory (`tessera model create --arch A --preset tiny --seed S`), sets the case's config.json fields
# (rope_parameters, max_position_embeddings, sliding_window, Qwen2's layer_types: recorded under
# "config" so the spec makes the same checkpoint), loads it in float32 and decodes greedily: one
# forward over the whole prompt, then one token per forward with the cache, as generate() does, never
# stopping at eos. Recorded per prompt: output_ids, the top 3 [id, logit] of every step and the first
# 16 logits after the prompt.
#
# Dynamic rope keeps state in the rotary module (the longest length seen so far), so every prompt gets
# a freshly loaded model: each generation then starts as a server's request would.
#
# "inverse_frequencies" records transformers' own rope init functions (inv_freq and attention factor)
# for more variants than the models run (mscale, attention_factor, beta_*, truncate, dynamic lengths).

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
from transformers import AutoConfig, AutoModelForCausalLM  # noqa: E402
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "devtools", "reference", "expected", "rope.json")
NEW_TOKENS = 24
VOCAB = 512  # the tiny preset's

CASES = [
    {
        "name": "llama-yarn",
        "arch": "llama",
        "seed": 101,
        "config": {
            "max_position_embeddings": 128,
            "rope_parameters": {
                "rope_type": "yarn",
                "rope_theta": 10000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 32,
            },
        },
        "prompt_lengths": [48, 20],
    },
    {
        "name": "qwen2-yarn",
        "arch": "qwen2",
        "seed": 102,
        "config": {
            "max_position_embeddings": 128,
            "rope_parameters": {
                "rope_type": "yarn",
                "rope_theta": 1000000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 32,
            },
        },
        "prompt_lengths": [48],
    },
    {
        "name": "llama-dynamic",
        "arch": "llama",
        "seed": 103,
        "config": {
            "max_position_embeddings": 32,
            "rope_parameters": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0},
        },
        # 40: the prompt alone is past max_position_embeddings; 20: it crosses it while decoding.
        "prompt_lengths": [40, 20],
    },
    {
        "name": "mistral-sliding-window",
        "arch": "mistral",
        "seed": 104,
        "config": {"sliding_window": 16},
        # 56: three and a half windows of prompt; 10: the window fills while decoding.
        "prompt_lengths": [56, 10],
    },
    {
        "name": "qwen2-sliding-window",
        "arch": "qwen2",
        "seed": 105,
        # Qwen2 slides only where layer_types says so (by default from max_window_layers on).
        "config": {
            "use_sliding_window": True,
            "sliding_window": 16,
            "max_window_layers": 0,
            "layer_types": ["sliding_attention", "sliding_attention"],
        },
        "prompt_lengths": [40],
    },
]

# Variants whose tables are checked without running a model: (name, arch, config fields, seq_len).
TABLES = [
    ("yarn", "llama", CASES[0]["config"], None),
    ("yarn qwen2", "qwen2", CASES[1]["config"], None),
    (
        "yarn mscale",
        "llama",
        {
            "max_position_embeddings": 128,
            "rope_parameters": {
                "rope_type": "yarn",
                "rope_theta": 10000.0,
                "factor": 8.0,
                "original_max_position_embeddings": 16,
                "mscale": 0.707,
                "mscale_all_dim": 1.0,
                "beta_fast": 16.0,
                "beta_slow": 2.0,
            },
        },
        None,
    ),
    (
        "yarn attention_factor no truncate",
        "llama",
        {
            "max_position_embeddings": 128,
            "rope_parameters": {
                "rope_type": "yarn",
                "rope_theta": 500000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 32,
                "attention_factor": 1.25,
                "truncate": False,
            },
        },
        None,
    ),
    ("dynamic at max_position_embeddings", "llama", CASES[2]["config"], 32),
    ("dynamic 40", "llama", CASES[2]["config"], 40),
    ("dynamic 63", "llama", CASES[2]["config"], 63),
]


def make_checkpoint(arch, seed, fields, out):
    subprocess.run(
        ["node", "services/cli/main.ts", "model", "create", "--arch", arch, "--preset", "tiny",
         "--seed", str(seed), "--out", out],
        cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
    )
    path = os.path.join(out, "config.json")
    with open(path) as f:
        config = json.load(f)
    config.update(fields)
    with open(path, "w") as f:
        json.dump(config, f, indent=2)


def prompt_ids(seed, length):
    rng = random.Random(seed * 1000 + length)
    return [rng.randrange(3, VOCAB) for _ in range(length)]


def top3(logits):
    values, ids = torch.topk(logits, 3)
    return [[int(i), float(v)] for i, v in zip(ids, values)]


@torch.no_grad()
def greedy(model_dir, ids):
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    out = model(input_ids=torch.tensor([ids]), use_cache=True)
    past = out.past_key_values
    logits = out.logits[0, -1]
    head = [float(x) for x in logits[:16]]
    output_ids, steps = [], []
    for _ in range(NEW_TOKENS):
        steps.append(top3(logits))
        token = int(torch.argmax(logits))
        output_ids.append(token)
        out = model(input_ids=torch.tensor([[token]]), past_key_values=past, use_cache=True)
        past = out.past_key_values
        logits = out.logits[0, -1]
    return {"output_ids": output_ids, "steps_top3": steps, "last_prompt_logits_head": head}


def inverse_frequencies(tmp):
    tables = []
    for name, arch, fields, seq_len in TABLES:
        out = os.path.join(tmp, "table-" + name.replace(" ", "-"))
        make_checkpoint(arch, 1, fields, out)
        config = AutoConfig.from_pretrained(out)
        fn = ROPE_INIT_FUNCTIONS[config.rope_parameters["rope_type"]]
        length = None if seq_len is None else torch.tensor(seq_len)
        inv, factor = fn(config, "cpu", seq_len=length)
        tables.append({
            "name": name,
            "arch": arch,
            "config": fields,
            "seq_len": seq_len,
            "inv_freq": [float(x) for x in inv],
            "attention_factor": float(factor),
        })
    return tables


def main():
    torch.manual_seed(0)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            out = os.path.join(tmp, case["name"])
            make_checkpoint(case["arch"], case["seed"], case["config"], out)
            prompts = []
            for length in case["prompt_lengths"]:
                ids = prompt_ids(case["seed"], length)
                prompts.append({"prompt_ids": ids, **greedy(out, ids)})
                print(f"{case['name']}: prompt {length}: {prompts[-1]['output_ids']}", file=sys.stderr)
            cases.append({k: case[k] for k in ("name", "arch", "seed", "config")} | {"prompts": prompts})
        tables = inverse_frequencies(tmp)
    result = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "preset": "tiny",
        "new_tokens": NEW_TOKENS,
        "cases": cases,
        "inverse_frequencies": tables,
    }
    with open(OUT, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
