// Builds the ONNX graph of a decoder-only transformer (the Llama family, dense or mixture-of-experts)
// from its normalized config and checkpoint weights. One run is one engine step over a batch of
// sequences with a paged KV cache; see docs/engine-memory-layout.md for the layout and why.
//
//   inputs   input_ids, position_ids [N] int64: the step's N new tokens, sequence after sequence
//            key_cache_i, value_cache_i [slots, kvH, D]: the whole KV pool of layer i (passed without a
//            copy; slot = block * block_size + offset)
//            per attention group g in (decode, prefill):
//              g_query_index [B,S]: flat index of each sequence's new tokens (padded)
//              g_past_index [B,P]: pool slots of each sequence's cached tokens (padded)
//              g_bias [B,1,S,P+S]: 0 where a query may attend, -inf elsewhere (causal, window, padding)
//            unpad_index [N]: where each token's attention output sits in the groups' padded outputs
//            logits_index [L]: the tokens whose next-token logits are wanted
//   outputs  logits [L,V]; new_key_i, new_value_i [N,kvH,D]: the new tokens' K/V, which the caller
//            writes into the pool (graph outputs stay small: no full cache is ever copied out).
// Decode sequences (one new token) and prefill chunks form separate groups so a long chunk does not
// pad every decode sequence to its length. Linear layers run on the flat [N, hidden] batch.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { WeightNames } from "../arch/registry.ts";
import type { AttentionBackend } from "./attention-backend.ts";
import { DecoderOps } from "./decoder-ops.ts";
import type { WeightSource } from "./graph-names.ts";
import { GraphBuilder } from "./onnx-builder.ts";

export {
  ATTENTION_GROUPS,
  type AttentionGroup,
  keyCacheName,
  newKeyName,
  newValueName,
  valueCacheName,
  type WeightSource,
} from "./graph-names.ts";

export function buildDecoderGraph(
  config: DecoderConfig,
  names: WeightNames,
  weights: WeightSource,
  attention: AttentionBackend,
): Uint8Array {
  const g = new GraphBuilder();
  const ops = new DecoderOps(g, { config, names, weights, attention });
  const ids = g.input("input_ids", "int64", ["tokens"]);
  const positions = g.input("position_ids", "int64", ["tokens"]);
  ops.attentionGroupInputs();
  const unpad = g.input("unpad_index", "int64", ["tokens"]);
  const logitsIndex = g.input("logits_index", "int64", ["logit_rows"]);
  let h = ops.embed(ids); // [N, hidden]
  const rope = ops.rotaryTables(positions);
  for (let i = 0; i < config.numLayers; i++) h = ops.layer(i, h, rope, unpad);
  g.output(ops.head(h, logitsIndex), "logits", "float", ["logit_rows", config.vocabSize]);
  return g.toBytes(config.architecture);
}
