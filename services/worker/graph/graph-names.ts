// Names shared by the graphs Tessera builds and the code that feeds them: the KV pool inputs and new
// K/V outputs of each layer, the attention groups, and where weights come from.
import type { RepackedMatrix } from "../model/prequantized-repack.ts";
import type { QuantOptions } from "../model/quantize-blocks.ts";
import type { StoredTensor, Tensor } from "../model/safetensors.ts";
import type { TensorSlice } from "../model/tensor-slice.ts";

export interface WeightSource {
  has(name: string): boolean;
  read(name: string, expectedShape?: number[]): Tensor;
  /** One slice of a tensor whose whole shape is `expectedShape` (a tensor-parallel rank's part). */
  readSlice(name: string, expectedShape: number[], slice: TensorSlice): Tensor;
  /** A tensor (or a slice) in the dtype the checkpoint stores it in: 16-bit weights stay 16-bit. */
  readStored(name: string, expectedShape: number[], slice?: TensorSlice): StoredTensor;
  /** Set: projection matrices are kept quantized (graph-weights-quantized.ts, graph-weights-channel.ts). */
  readonly quantization?: QuantOptions;
  /**
   * MatMulNBits accuracy_level; default 4 (int8 activations, graph-weights-quantized.ts). 0 computes in
   * float32 from the codes: the specs compare packed checkpoints with their float weights so.
   */
  readonly nbitsAccuracyLevel?: number;
  /**
   * A GPTQ/AWQ checkpoint's matrix in MatMulNBits's layout, or undefined when it is stored as floats
   * (absent: no pre-quantized matrices).
   */
  readPrequantized?(name: string, shape: [number, number], slice?: TensorSlice): RepackedMatrix | undefined;
}

export const keyCacheName = (layer: number) => `key_cache_${layer}`;
export const valueCacheName = (layer: number) => `value_cache_${layer}`;
export const newKeyName = (layer: number) => `new_key_${layer}`;
export const newValueName = (layer: number) => `new_value_${layer}`;
export const ATTENTION_GROUPS = ["decode", "prefill"] as const;
export type AttentionGroup = (typeof ATTENTION_GROUPS)[number];
/** Per-token rotary inverse frequencies [tokens, head_dim / 2]: an input only where they depend on
 * the sequence length (dynamic rope). */
export const ROPE_INV_FREQ = "rope_inv_freq";
