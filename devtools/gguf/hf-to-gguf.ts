// Converts a Hugging Face llama checkpoint folder (config.json, tokenizer.json, safetensors) into a
// GGUF that llama.cpp runs, with the projection matrices in F32, Q8_0 or Q4_0: our own writer, so that
// the peer benchmark (bench/suites/peers.ts) can run llama.cpp on exactly the weights Tessera serves
// without Python. It does what llama.cpp's convert_hf_to_gguf.py does for LlamaForCausalLM:
//   - hyperparameters under llama.*; tensor names token_embd, blk.N.attn_q/k/v/output,
//     ffn_gate/up/down, attn_norm, ffn_norm, output_norm, output;
//   - q_proj and k_proj rows PERMUTED back from Hugging Face's rotary layout (each head's first half
//     holds the even rotary components, its second half the odd ones) to the interleaved pairs ggml's
//     LLAMA rope (mode 0) rotates: row (h, 2i + j) of ours = row (h, j * headDim/2 + i) of theirs;
//   - 1-D tensors (norms) and the token embedding stay F32 (the embedding only has rows gathered, and
//     Tessera's --quantization keeps it float32 too); every other matrix, lm_head included, takes
//     the asked type, quantized by ggml's reference block quantizers (ggml-quants.ts).
import fs from "node:fs";
import path from "node:path";
import { type CheckpointTensor, listCheckpointTensors, readFloat32 } from "./checkpoint-tensors.ts";
import { quantizeQ4_0, quantizeQ8_0 } from "./ggml-quants.ts";
import { tokenizerMetadata } from "./gguf-tokenizer.ts";
import {
  f32,
  type GgmlTypeName,
  type GgufTensor,
  type GgufValue,
  str,
  u32,
  writeGguf,
} from "./gguf-writer.ts";

export type GgufWeightType = "F32" | "Q8_0" | "Q4_0";
export const GGUF_WEIGHT_TYPES: readonly GgufWeightType[] = ["F32", "Q8_0", "Q4_0"];

/** general.file_type (llama_ftype) of each choice. */
const FILE_TYPE: Readonly<Record<GgufWeightType, number>> = { F32: 0, Q4_0: 2, Q8_0: 7 };

interface LlamaConfig {
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediate: number;
  vocab: number;
  context: number;
  eps: number;
  ropeTheta: number;
  tied: boolean;
  ids: { bos?: number; eos?: number; pad?: number };
}

function readConfig(modelDir: string): LlamaConfig {
  const file = path.join(modelDir, "config.json");
  const c = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
  if (c["model_type"] !== "llama")
    throw new Error(`${file}: model_type ${String(c["model_type"])}; only llama converts`);
  const ropeType = (c["rope_parameters"] as { rope_type?: string } | undefined)?.rope_type;
  if (c["rope_scaling"] || (ropeType !== undefined && ropeType !== "default"))
    throw new Error(`${file}: rope scaling is not supported by this converter`);
  const num = (key: string): number => {
    const v = c[key];
    if (typeof v !== "number") throw new Error(`${file}: ${key} must be a number`);
    return v;
  };
  const heads = num("num_attention_heads");
  const theta =
    (c["rope_parameters"] as { rope_theta?: number } | undefined)?.rope_theta ?? c["rope_theta"] ?? 10000;
  const id = (key: string) => (typeof c[key] === "number" ? (c[key] as number) : undefined);
  return {
    hidden: num("hidden_size"),
    layers: num("num_hidden_layers"),
    heads,
    kvHeads: typeof c["num_key_value_heads"] === "number" ? (c["num_key_value_heads"] as number) : heads,
    headDim: typeof c["head_dim"] === "number" ? (c["head_dim"] as number) : num("hidden_size") / heads,
    intermediate: num("intermediate_size"),
    vocab: num("vocab_size"),
    context: num("max_position_embeddings"),
    eps: num("rms_norm_eps"),
    ropeTheta: theta as number,
    tied: c["tie_word_embeddings"] === true,
    ids: {
      ...(id("bos_token_id") !== undefined && { bos: id("bos_token_id")! }),
      ...(id("eos_token_id") !== undefined && { eos: id("eos_token_id")! }),
      ...(id("pad_token_id") !== undefined && { pad: id("pad_token_id")! }),
    },
  };
}

/** Rows of W [heads * headDim, in] from Hugging Face's rotary layout to ggml's interleaved pairs. */
export function permuteRotary(w: Float32Array, heads: number, headDim: number, inDim: number): Float32Array {
  const out = new Float32Array(w.length);
  const half = headDim / 2;
  for (let h = 0; h < heads; h++)
    for (let i = 0; i < half; i++)
      for (let j = 0; j < 2; j++) {
        const src = (h * headDim + j * half + i) * inDim;
        out.set(w.subarray(src, src + inDim), (h * headDim + 2 * i + j) * inDim);
      }
  return out;
}

function metadata(c: LlamaConfig, modelDir: string, type: GgufWeightType): Map<string, GgufValue> {
  const m = new Map<string, GgufValue>([
    ["general.architecture", str("llama")],
    ["general.name", str(path.basename(path.resolve(modelDir)))],
    ["general.file_type", u32(FILE_TYPE[type])],
    ["llama.vocab_size", u32(c.vocab)],
    ["llama.context_length", u32(c.context)],
    ["llama.embedding_length", u32(c.hidden)],
    ["llama.block_count", u32(c.layers)],
    ["llama.feed_forward_length", u32(c.intermediate)],
    ["llama.attention.head_count", u32(c.heads)],
    ["llama.attention.head_count_kv", u32(c.kvHeads)],
    ["llama.attention.layer_norm_rms_epsilon", f32(c.eps)],
    ["llama.rope.freq_base", f32(c.ropeTheta)],
    ["llama.rope.dimension_count", u32(c.headDim)],
  ]);
  if (c.headDim !== c.hidden / c.heads) {
    m.set("llama.attention.key_length", u32(c.headDim));
    m.set("llama.attention.value_length", u32(c.headDim));
  }
  for (const [k, v] of tokenizerMetadata(modelDir, c.vocab, c.ids)) m.set(k, v);
  return m;
}

/** The GGUF name of a checkpoint tensor and, for q/k, the heads to permute. */
function ggufName(name: string, c: LlamaConfig): { name: string; permuteHeads?: number } {
  if (name === "model.embed_tokens.weight") return { name: "token_embd.weight" };
  if (name === "model.norm.weight") return { name: "output_norm.weight" };
  if (name === "lm_head.weight") return { name: "output.weight" };
  const layer = /^model\.layers\.(\d+)\.(.+)\.weight$/.exec(name);
  const part: Record<string, string> = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
    input_layernorm: "attn_norm",
    post_attention_layernorm: "ffn_norm",
  };
  const mapped = layer && part[layer[2]!];
  if (!mapped)
    throw new Error(`${name}: no llama GGUF tensor for it (biases and other extras are not converted)`);
  const permuteHeads = mapped === "attn_q" ? c.heads : mapped === "attn_k" ? c.kvHeads : undefined;
  return { name: `blk.${layer![1]}.${mapped}.weight`, ...(permuteHeads !== undefined && { permuteHeads }) };
}

function tensorOf(t: CheckpointTensor, c: LlamaConfig, type: GgufWeightType): GgufTensor {
  const { name, permuteHeads } = ggufName(t.name, c);
  const embeddingOnly = name === "token_embd.weight" && !c.tied;
  const as: GgmlTypeName = t.shape.length === 1 || embeddingOnly ? "F32" : type;
  return {
    name,
    type: as,
    shape: t.shape,
    data: () => {
      let x = readFloat32(t);
      if (permuteHeads !== undefined) x = permuteRotary(x, permuteHeads, c.headDim, t.shape[1]!);
      const bytes = as === "Q8_0" ? quantizeQ8_0(x) : as === "Q4_0" ? quantizeQ4_0(x) : x;
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  };
}

export interface ConvertedGguf {
  file: string;
  bytes: number;
  tensors: number;
}

/** Converts the llama checkpoint in `modelDir` to a GGUF file `out` with its matrices in `type`. */
export function convertHfToGguf(modelDir: string, out: string, type: GgufWeightType): ConvertedGguf {
  const c = readConfig(modelDir);
  const tensors = [...listCheckpointTensors(modelDir).values()].map((t) => tensorOf(t, c, type));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const bytes = writeGguf(out, metadata(c, modelDir, type), tensors);
  return { file: out, bytes, tensors: tensors.length };
}
