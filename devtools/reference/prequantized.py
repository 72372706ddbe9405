"""GPTQ and AWQ checkpoints for services/worker/model/prequantized-*.spec.ts, written here from the
formats' own packing code, independently of our TypeScript reader, with the float weights they stand
for.

From services/worker/testdata/hf-reference/tiny-qwen2 (random weights; hidden 96, GQA, q/k/v biases,
tied embeddings), cut to its first layer to keep the committed files small (< 2 MB in all), each
projection matrix W [out, in] is quantized round-to-nearest, asymmetric, 4 bits, group size 32 (the
hidden size, 96, is no multiple of 128): per output feature and group, AutoGPTQ's Quantizer rule
(xmin = min(w, 0), xmax = max(w, 0), scale = (xmax - xmin) / 15 rounded to float16 as checkpoints
store it, zero = round(-xmin / scale), q = clamp(round(w / scale) + zero, 0, 15)). Every other tensor
(embeddings, norms, biases) is stored as float16, as quantized checkpoints keep them.

Writes, under services/worker/testdata/prequantized/:
  - gptq/: AutoGPTQ's format v1 ("checkpoint_format": "gptq"), laid out as
    auto_gptq/nn_modules/qlinear QuantLinear.pack writes it: qweight [in/8, out] int32 with input rows
    8i..8i+7 at bits 0, 4, ..., 28 of row i; qzeros [groups, out/8] int32 holding zero - 1 (AutoGPTQ's
    `zeros -= 1`), output columns 8c..8c+7 at bits 0..28 of column c; scales [groups, out] float16;
    g_idx [in] int32 = i // group_size.
  - gptq-act-order/: the same format with desc_act: each matrix's groups are made of input rows in a
    random order (g_idx[perm[j]] = j // group_size), as GPTQ's act-order leaves them.
  - awq/: AutoAWQ's GEMM format ("version": "gemm"), as awq/modules/linear/gemm.py
    WQLinear_GEMM.from_linear packs it: qweight [in, out/8] int32 with output column 8c + ORDER[k] at
    bits 4k of column c, ORDER = [0, 2, 4, 6, 1, 3, 5, 7]; qzeros [groups, out/8] int32 (zero as is)
    packed the same way; scales [groups, out] float16.
  - dequantized/ and dequantized-act-order/: float checkpoints whose projection matrices are the
    float32 values (q - zero) * scale of gptq/ (the same as awq/'s) and of gptq-act-order/.

Run from the repository root (numpy and safetensors; no torch):

    pip install numpy safetensors
    python3 devtools/reference/prequantized.py
"""

import json
import os
import shutil

import numpy as np
from safetensors.numpy import load_file, save_file

SOURCE = "services/worker/testdata/hf-reference/tiny-qwen2"
OUT = "services/worker/testdata/prequantized"
LAYERS = 1
BITS = 4
GROUP = 32
MAXQ = 2**BITS - 1
PROJECTIONS = [
    "self_attn.q_proj",
    "self_attn.k_proj",
    "self_attn.v_proj",
    "self_attn.o_proj",
    "mlp.gate_proj",
    "mlp.up_proj",
    "mlp.down_proj",
]
AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]


def quantize(w, g_idx):
    """RTN per output feature and group: codes [out, in], scales and zeros [groups, out]."""
    out, n_in = w.shape
    groups = int(g_idx.max()) + 1
    scales = np.zeros((groups, out), np.float16)
    zeros = np.zeros((groups, out), np.int64)
    q = np.zeros((out, n_in), np.int64)
    for g in range(groups):
        cols = np.nonzero(g_idx == g)[0]
        block = w[:, cols]
        xmin = np.minimum(block.min(axis=1), 0)
        xmax = np.maximum(block.max(axis=1), 0)
        scale = ((xmax - xmin) / MAXQ).astype(np.float16)
        s = scale.astype(np.float32)
        zero = np.round(-xmin / s).astype(np.int64)
        # GPTQ v1 stores zero - 1: a zero of 0 would not survive it (AutoGPTQ's own overflow).
        assert (zero >= 1).all() and (zero <= MAXQ).all()
        q[:, cols] = np.clip(np.round(block / s[:, None]) + zero[:, None], 0, MAXQ)
        scales[g] = scale
        zeros[g] = zero
    return q, scales, zeros


def dequantize(q, scales, zeros, g_idx):
    s = scales.astype(np.float32)[g_idx].T  # [out, in]
    z = zeros[g_idx].T
    return ((q - z).astype(np.float32) * s).astype(np.float32)


def pack_gptq(q, scales, zeros, g_idx):
    intweight = q.T.astype(np.uint32)  # [in, out]
    per = 32 // BITS
    qweight = np.zeros((intweight.shape[0] // per, intweight.shape[1]), np.uint32)
    for row in range(qweight.shape[0]):
        for j in range(per):
            qweight[row] |= intweight[row * per + j] << np.uint32(BITS * j)
    z = (zeros - 1).astype(np.uint32)  # format v1
    qzeros = np.zeros((z.shape[0], z.shape[1] // per), np.uint32)
    for col in range(qzeros.shape[1]):
        for j in range(per):
            qzeros[:, col] |= z[:, col * per + j] << np.uint32(BITS * j)
    return {
        "qweight": qweight.view(np.int32),
        "qzeros": qzeros.view(np.int32),
        "scales": scales,
        "g_idx": g_idx.astype(np.int32),
    }


def pack_awq(q, scales, zeros):
    intweight = q.T.astype(np.uint32)  # [in, out]
    per = 32 // BITS
    qweight = np.zeros((intweight.shape[0], intweight.shape[1] // per), np.uint32)
    for col in range(qweight.shape[1]):
        for i in range(per):
            qweight[:, col] |= intweight[:, col * per + AWQ_ORDER[i]] << np.uint32(BITS * i)
    z = zeros.astype(np.uint32)
    qzeros = np.zeros((z.shape[0], z.shape[1] // per), np.uint32)
    for col in range(qzeros.shape[1]):
        for i in range(per):
            qzeros[:, col] |= z[:, col * per + AWQ_ORDER[i]] << np.uint32(BITS * i)
    return {"qweight": qweight.view(np.int32), "qzeros": qzeros.view(np.int32), "scales": scales}


def write(name, tensors, config, quantization=None):
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    c = dict(config)
    if quantization:
        c["quantization_config"] = quantization
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
        f.write("\n")
    shutil.copy(os.path.join(SOURCE, "generation_config.json"), folder)
    save_file({k: np.ascontiguousarray(v) for k, v in sorted(tensors.items())}, os.path.join(folder, "model.safetensors"))


def main():
    rng = np.random.default_rng(18)
    with open(os.path.join(SOURCE, "config.json")) as f:
        config = json.load(f)
    config["num_hidden_layers"] = LAYERS
    config["dtype"] = "float16"
    source = load_file(os.path.join(SOURCE, "model.safetensors"))
    keep = {
        k: v
        for k, v in source.items()
        if not k.startswith("model.layers.") or int(k.split(".")[2]) < LAYERS
    }
    projections = {f"model.layers.{i}.{p}" for i in range(LAYERS) for p in PROJECTIONS}
    common = {k: v.astype(np.float16) for k, v in keep.items() if k.removesuffix(".weight") not in projections}
    outputs = {name: dict(common) for name in ["gptq", "gptq-act-order", "awq", "dequantized", "dequantized-act-order"]}
    for base in sorted(projections):
        w = keep[f"{base}.weight"].astype(np.float32)
        n_in = w.shape[1]
        assert n_in % GROUP == 0
        plain = np.arange(n_in) // GROUP
        q, scales, zeros = quantize(w, plain)
        for k, v in pack_gptq(q, scales, zeros, plain).items():
            outputs["gptq"][f"{base}.{k}"] = v
        for k, v in pack_awq(q, scales, zeros).items():
            outputs["awq"][f"{base}.{k}"] = v
        outputs["dequantized"][f"{base}.weight"] = dequantize(q, scales, zeros, plain)

        perm = rng.permutation(n_in)
        act_order = np.zeros(n_in, np.int64)
        act_order[perm] = np.arange(n_in) // GROUP
        q, scales, zeros = quantize(w, act_order)
        for k, v in pack_gptq(q, scales, zeros, act_order).items():
            outputs["gptq-act-order"][f"{base}.{k}"] = v
        outputs["dequantized-act-order"][f"{base}.weight"] = dequantize(q, scales, zeros, act_order)

    gptq = {
        "quant_method": "gptq",
        "bits": BITS,
        "group_size": GROUP,
        "damp_percent": 0.01,
        "desc_act": False,
        "static_groups": False,
        "sym": False,
        "true_sequential": True,
        "checkpoint_format": "gptq",
        "model_name_or_path": None,
        "model_file_base_name": None,
    }
    awq = {
        "quant_method": "awq",
        "bits": BITS,
        "group_size": GROUP,
        "zero_point": True,
        "version": "gemm",
        "modules_to_not_convert": None,
    }
    write("gptq", outputs["gptq"], config, gptq)
    write("gptq-act-order", outputs["gptq-act-order"], config, {**gptq, "desc_act": True})
    write("awq", outputs["awq"], config, awq)
    write("dequantized", outputs["dequantized"], config)
    write("dequantized-act-order", outputs["dequantized-act-order"], config)


if __name__ == "__main__":
    main()
