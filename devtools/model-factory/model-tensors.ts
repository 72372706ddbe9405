// The tensors of a checkpoint, named and shaped as transformers saves them, in state-dict order
// (the order shards are filled in; inside a file they are sorted by name).

import type { ModelSpec } from "./presets.ts";
import { elementCount } from "./safetensors-writer.ts";

export interface TensorPlan {
  readonly name: string;
  readonly shape: readonly number[];
  /** "normal": random with the spec's init std; "ones": RMSNorm weights. */
  readonly init: "normal" | "ones";
}

export function modelTensors(spec: ModelSpec): TensorPlan[] {
  const h = spec.hiddenSize;
  const q = spec.numHeads * spec.headDim;
  const kv = spec.numKvHeads * spec.headDim;
  const inter = spec.intermediateSize;
  const out: TensorPlan[] = [];
  const w = (name: string, ...shape: number[]) => out.push({ name, shape, init: "normal" });
  const norm = (name: string) => out.push({ name, shape: [h], init: "ones" });

  w("model.embed_tokens.weight", spec.vocabSize, h);
  for (let l = 0; l < spec.numLayers; l++) {
    const p = `model.layers.${l}`;
    for (const [proj, rows] of [
      ["q_proj", q],
      ["k_proj", kv],
      ["v_proj", kv],
    ] as const) {
      w(`${p}.self_attn.${proj}.weight`, rows, h);
      if (spec.qkvBias) w(`${p}.self_attn.${proj}.bias`, rows);
    }
    w(`${p}.self_attn.o_proj.weight`, h, q);
    if (spec.numExperts > 0) {
      w(`${p}.block_sparse_moe.gate.weight`, spec.numExperts, h);
      for (let e = 0; e < spec.numExperts; e++) {
        const x = `${p}.block_sparse_moe.experts.${e}`;
        w(`${x}.w1.weight`, inter, h);
        w(`${x}.w2.weight`, h, inter);
        w(`${x}.w3.weight`, inter, h);
      }
    } else {
      w(`${p}.mlp.gate_proj.weight`, inter, h);
      w(`${p}.mlp.up_proj.weight`, inter, h);
      w(`${p}.mlp.down_proj.weight`, h, inter);
    }
    norm(`${p}.input_layernorm.weight`);
    norm(`${p}.post_attention_layernorm.weight`);
  }
  norm("model.norm.weight");
  if (!spec.tieWordEmbeddings) w("lm_head.weight", spec.vocabSize, h);
  return out;
}

/** Parameters stored in the checkpoint (tied embeddings counted once). */
export function parameterCount(spec: ModelSpec): number {
  return modelTensors(spec).reduce((n, t) => n + elementCount(t.shape), 0);
}
