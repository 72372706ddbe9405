// The normalized description of a decoder-only transformer, parsed from a Hugging Face config.json.
// Every supported architecture maps its config onto this one shape; the graph builder reads only this.
import { z } from "zod";
import { type Result, TesseraError } from "../../kernel/errors.ts";
import { parseRopeScaling, type RopeScaling, ropeMaxContext, ropeParamsSchema } from "./rope.ts";

export { type RopeScaling, ropeInverseFrequencies } from "./rope.ts";

export interface MoeConfig {
  numExperts: number;
  topK: number;
  /** Renormalize the top-k routing weights to sum to 1 (Mixtral does). */
  normalizeTopK: boolean;
}

export interface DecoderConfig {
  architecture: string;
  modelType: string;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  intermediateSize: number;
  vocabSize: number;
  maxContext: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeScaling: RopeScaling;
  tieWordEmbeddings: boolean;
  /** Biases on the q, k and v projections (Qwen2). */
  qkvBias: boolean;
  /** Attention sees only the last `slidingWindow` positions (Mistral); undefined = full attention. */
  slidingWindow: number | undefined;
  moe: MoeConfig | undefined;
  bosTokenId: number | undefined;
  eosTokenIds: number[];
}

const positive = z.number().int().positive();
const tokenIds = z.union([z.number().int().nonnegative(), z.array(z.number().int().nonnegative())]);

/** The config.json fields shared by the Llama family. */
export const hfDecoderConfigSchema = z
  .object({
    model_type: z.string(),
    hidden_size: positive,
    num_hidden_layers: positive,
    num_attention_heads: positive,
    num_key_value_heads: positive.optional(),
    head_dim: positive.nullish(),
    intermediate_size: positive,
    vocab_size: positive,
    max_position_embeddings: positive,
    rms_norm_eps: z.number().positive().default(1e-6),
    rope_theta: z.number().positive().optional(),
    rope_parameters: ropeParamsSchema.nullish(),
    rope_scaling: ropeParamsSchema.nullish(),
    original_max_position_embeddings: positive.optional(),
    tie_word_embeddings: z.boolean().default(false),
    hidden_act: z.string().default("silu"),
    attention_bias: z.boolean().default(false),
    sliding_window: positive.nullish(),
    use_sliding_window: z.boolean().optional(),
    max_window_layers: z.number().int().nonnegative().optional(),
    layer_types: z.array(z.string()).nullish(),
    num_local_experts: positive.optional(),
    num_experts_per_tok: positive.optional(),
    bos_token_id: z.number().int().nonnegative().nullish(),
    eos_token_id: tokenIds.nullish(),
  })
  .loose();

export type HfDecoderConfig = z.infer<typeof hfDecoderConfigSchema>;

export function parseHfConfig(raw: unknown): Result<HfDecoderConfig> {
  const parsed = hfDecoderConfigSchema.safeParse(raw);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue?.path.join(".") || "config.json";
  return { error: TesseraError.invalidArgument(`config.json ${field}`, issue?.message ?? "invalid") };
}

/** Builds the normalized config; architecture-specific choices come in through `overrides`. */
export function toDecoderConfig(
  architecture: string,
  hf: HfDecoderConfig,
  overrides: Partial<DecoderConfig> = {},
): Result<DecoderConfig> {
  if (hf.hidden_act !== "silu") {
    return {
      error: TesseraError.invalidArgument(
        "config.json hidden_act",
        `${hf.hidden_act} is not supported (silu)`,
      ),
    };
  }
  const numKvHeads = hf.num_key_value_heads ?? hf.num_attention_heads;
  if (hf.num_attention_heads % numKvHeads !== 0) {
    return {
      error: TesseraError.invalidArgument(
        "config.json num_key_value_heads",
        `${numKvHeads} does not divide num_attention_heads ${hf.num_attention_heads}`,
      ),
    };
  }
  const rope = hf.rope_parameters ?? hf.rope_scaling ?? undefined;
  const scaling = parseRopeScaling(rope, {
    maxPositions: hf.max_position_embeddings,
    topLevelOriginalMaxPositions: hf.original_max_position_embeddings,
    field: hf.rope_parameters ? "rope_parameters" : "rope_scaling",
  });
  if (scaling.error) return scaling;
  const eos = hf.eos_token_id ?? [];
  const config: DecoderConfig = {
    architecture,
    modelType: hf.model_type,
    hiddenSize: hf.hidden_size,
    numLayers: hf.num_hidden_layers,
    numHeads: hf.num_attention_heads,
    numKvHeads,
    headDim: hf.head_dim ?? hf.hidden_size / hf.num_attention_heads,
    intermediateSize: hf.intermediate_size,
    vocabSize: hf.vocab_size,
    maxContext: ropeMaxContext(scaling.value, hf.max_position_embeddings),
    rmsNormEps: hf.rms_norm_eps,
    ropeTheta: rope?.rope_theta ?? hf.rope_theta ?? 10000,
    ropeScaling: scaling.value,
    tieWordEmbeddings: hf.tie_word_embeddings,
    qkvBias: hf.attention_bias,
    slidingWindow: hf.use_sliding_window === false ? undefined : (hf.sliding_window ?? undefined),
    moe: undefined,
    bosTokenId: hf.bos_token_id ?? undefined,
    eosTokenIds: Array.isArray(eos) ? eos : [eos],
    ...overrides,
  };
  if (!Number.isInteger(config.headDim)) {
    return {
      error: TesseraError.invalidArgument("config.json head_dim", "hidden_size is not divisible by heads"),
    };
  }
  return { value: config };
}
