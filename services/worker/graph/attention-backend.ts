// How a layer's attention is computed for one group of sequences. Backends are interchangeable: the
// engine times the available ones on the loaded model at start-up and uses the fastest
// (runtime/attention-selection.ts), unless configuration forces one.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { AttentionGroup } from "./graph-names.ts";
import type { GraphBuilder } from "./onnx-builder.ts";

export interface AttentionInputs {
  /** [B,S,H,D] queries (RoPE applied). */
  query: string;
  /** [B,S,KV,D] keys and values of the new tokens (keys with RoPE). */
  newKey: string;
  newValue: string;
  /** [B,KV,P,D] cached keys and values gathered from the pool, head-major. */
  pastKey: string;
  pastValue: string;
  /** [B,KV,P] rows of a pool viewed as [slots*KV, D] that pastKey and pastValue gather. */
  pastRows: string;
  /** [B,1,S,P+S] additive mask over [past keys, new keys]. */
  bias: string;
  /** The layer's whole KV pool [slots,KV,D], for a backend that gathers other slots (shared prefixes). */
  keyCache: string;
  valueCache: string;
}

export interface AttentionBackend {
  readonly name: AttentionBackendName;
  /**
   * What the start-up race multiplies this backend's time by (1 if unset): a backend whose steps hold
   * more activation memory must be that much faster to be picked (runtime/attention-selection.ts).
   */
  readonly raceHandicap?: number;
  /** Adds the attention of one group and returns its output [B*S, H*D]. */
  build(g: GraphBuilder, config: DecoderConfig, group: AttentionGroup, inputs: AttentionInputs): string;
}

export const ATTENTION_BACKENDS = ["onnx-ops", "ms-gqa", "shared-prefix"] as const;
export type AttentionBackendName = (typeof ATTENTION_BACKENDS)[number];
