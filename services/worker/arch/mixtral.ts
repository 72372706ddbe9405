// MixtralForCausalLM: Mistral attention with a sparse mixture-of-experts MLP. A router picks the top-k
// of num_local_experts per token from a softmax, renormalizes their weights and sums the experts' outputs.
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";
import { type DecoderConfig, parseHfConfig, toDecoderConfig } from "./decoder-config.ts";
import { llamaLayerNames, llamaWeightNames } from "./llama.ts";
import type { ArchitectureDefinition } from "./registry.ts";

function parseConfig(raw: unknown): Result<DecoderConfig> {
  const hf = parseHfConfig(raw);
  if (hf.error) return hf;
  const numExperts = hf.value.num_local_experts ?? 8;
  const topK = hf.value.num_experts_per_tok ?? 2;
  if (topK > numExperts) {
    return {
      error: new TesseraError(
        Code.INVALID_ARGUMENT,
        `config.json num_experts_per_tok: ${topK} exceeds num_local_experts ${numExperts}`,
      ),
    };
  }
  return toDecoderConfig("MixtralForCausalLM", hf.value, { moe: { numExperts, topK, normalizeTopK: true } });
}

export const mixtral: ArchitectureDefinition = {
  name: "MixtralForCausalLM",
  modelTypes: ["mixtral"],
  parseConfig,
  weightNames: (config) =>
    llamaWeightNames(config, (i) => {
      const p = `model.layers.${i}.block_sparse_moe`;
      return {
        ...llamaLayerNames(i),
        mlp: undefined,
        moe: {
          router: `${p}.gate.weight`,
          expert: (e: number) => ({
            gate: `${p}.experts.${e}.w1.weight`,
            down: `${p}.experts.${e}.w2.weight`,
            up: `${p}.experts.${e}.w3.weight`,
          }),
        },
      };
    }),
};
