// Rotary position embeddings as Hugging Face transformers (5.18, modeling_rope_utils.py) computes them:
// the rope_scaling variants a config.json may name (default, linear, llama3, yarn, dynamic), their
// inverse frequencies and the attention factor yarn multiplies cos and sin by. The float32 steps of
// torch are replayed with Math.fround so that our tables match its to the last bit or two.
import { z } from "zod";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";

export type RopeScaling =
  | { type: "default" }
  | { type: "linear"; factor: number }
  | {
      type: "llama3";
      factor: number;
      lowFreqFactor: number;
      highFreqFactor: number;
      originalMaxPositions: number;
    }
  | {
      type: "yarn";
      factor: number;
      originalMaxPositions: number;
      betaFast: number;
      betaSlow: number;
      /** Whether the correction range is rounded to whole dimensions (transformers' default). */
      truncate: boolean;
      /** cos and sin are multiplied by this (config's attention_factor, or derived from factor and mscale). */
      attentionFactor: number;
    }
  | {
      /**
       * NTK-aware scaling whose base grows with the sequence: beyond `maxPositions` (config.json
       * max_position_embeddings, which transformers uses as the original context) the base becomes
       * theta * (factor * seqLen / maxPositions - (factor - 1)) ^ (dim / (dim - 2)).
       */
      type: "dynamic";
      factor: number;
      maxPositions: number;
    };

export const SUPPORTED_ROPE_TYPES = ["default", "linear", "llama3", "yarn", "dynamic"] as const;

const positive = z.number().int().positive();

export const ropeParamsSchema = z
  .object({
    rope_theta: z.number().positive().optional(),
    rope_type: z.string().optional(),
    type: z.string().optional(),
    factor: z.number().positive().optional(),
    low_freq_factor: z.number().positive().optional(),
    high_freq_factor: z.number().positive().optional(),
    original_max_position_embeddings: positive.optional(),
    beta_fast: z.number().nullish(),
    beta_slow: z.number().nullish(),
    mscale: z.number().nullish(),
    mscale_all_dim: z.number().nullish(),
    attention_factor: z.number().positive().nullish(),
    truncate: z.boolean().optional(),
  })
  .loose();

export type RopeParams = z.infer<typeof ropeParamsSchema>;

/** What of config.json besides rope_scaling the variants read. */
export interface RopeContext {
  /** config.json max_position_embeddings. */
  maxPositions: number;
  /** A top-level original_max_position_embeddings, which transformers prefers over rope_scaling's. */
  topLevelOriginalMaxPositions: number | undefined;
  /** Which key held the parameters (rope_parameters or rope_scaling), for error messages. */
  field: string;
}

export function parseRopeScaling(rope: RopeParams | undefined, ctx: RopeContext): Result<RopeScaling> {
  const type = rope?.rope_type ?? rope?.type ?? "default";
  const original =
    ctx.topLevelOriginalMaxPositions ?? rope?.original_max_position_embeddings ?? ctx.maxPositions;
  switch (type) {
    case "default":
      return { value: { type: "default" } };
    case "linear":
      return { value: { type: "linear", factor: rope?.factor ?? 1 } };
    case "llama3":
      return {
        value: {
          type: "llama3",
          factor: rope?.factor ?? 8,
          lowFreqFactor: rope?.low_freq_factor ?? 1,
          highFreqFactor: rope?.high_freq_factor ?? 4,
          originalMaxPositions: original,
        },
      };
    case "yarn":
      return { value: yarnScaling(rope ?? {}, original, ctx.maxPositions) };
    case "dynamic":
      return dynamicScaling(rope ?? {}, ctx);
    default:
      return {
        error: new TesseraError(
          Code.INVALID_ARGUMENT,
          `config.json ${ctx.field}.rope_type: ${type} is not supported (supported: ${SUPPORTED_ROPE_TYPES.join(", ")})`,
        ),
      };
  }
}

/** yarn's parameters with transformers' defaults and its derived attention factor (mscale). */
function yarnScaling(rope: RopeParams, original: number, maxPositions: number): RopeScaling {
  const factor = rope.factor ?? maxPositions / original;
  const mscale = (scale: number, m = 1) => (scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1);
  const attentionFactor =
    rope.attention_factor ??
    (rope.mscale && rope.mscale_all_dim
      ? mscale(factor, rope.mscale) / mscale(factor, rope.mscale_all_dim)
      : mscale(factor));
  return {
    type: "yarn",
    factor,
    originalMaxPositions: original,
    // transformers: `get("beta_fast") or 32`, so 0 and null both mean the default.
    betaFast: rope.beta_fast || 32,
    betaSlow: rope.beta_slow || 1,
    truncate: rope.truncate ?? true,
    attentionFactor,
  };
}

/**
 * transformers grows dynamic NTK past config.max_position_embeddings and ignores an
 * original_max_position_embeddings in the parameters; one that says otherwise would mean a different
 * scaling than the reference computes, so it is refused rather than guessed at.
 */
function dynamicScaling(rope: RopeParams, ctx: RopeContext): Result<RopeScaling> {
  const original = rope.original_max_position_embeddings;
  if (original !== undefined && original !== ctx.maxPositions) {
    return {
      error: TesseraError.invalidArgument(
        `config.json ${ctx.field}.original_max_position_embeddings`,
        `${original} differs from max_position_embeddings ${ctx.maxPositions}; dynamic rope scales past max_position_embeddings (as transformers does), so the two must agree`,
      ),
    };
  }
  if (rope.factor === undefined) {
    return {
      error: TesseraError.invalidArgument(`config.json ${ctx.field}.factor`, "dynamic rope needs a factor"),
    };
  }
  return { value: { type: "dynamic", factor: rope.factor, maxPositions: ctx.maxPositions } };
}

/**
 * The longest sequence the model serves: max_position_embeddings, extended by the factor for the
 * variants made to reach past it (as vLLM derives max_model_len): yarn to
 * original_max_position_embeddings × factor, dynamic to max_position_embeddings × factor.
 */
export function ropeMaxContext(scaling: RopeScaling, maxPositions: number): number {
  switch (scaling.type) {
    case "yarn":
      return Math.max(maxPositions, Math.floor(scaling.originalMaxPositions * scaling.factor));
    case "dynamic":
      return Math.floor(maxPositions * scaling.factor);
    default:
      return maxPositions;
  }
}

export interface RopeShape {
  headDim: number;
  ropeTheta: number;
  ropeScaling: RopeScaling;
}

/** The factor cos and sin are multiplied by (yarn's; 1 for every other variant). */
export function ropeAttentionFactor(c: RopeShape): number {
  return c.ropeScaling.type === "yarn" ? c.ropeScaling.attentionFactor : 1;
}

/** Whether the inverse frequencies depend on the sequence length (and so cannot be a constant table). */
export function ropeDependsOnLength(c: RopeShape): boolean {
  return c.ropeScaling.type === "dynamic";
}

/** 1 / base ** (2i / dim) for i < dim / 2, in float32 as transformers computes it. */
function baseInverseFrequencies(base: number, dim: number): Float32Array {
  const inv = new Float32Array(dim / 2);
  // transformers: 1 / base ** (arange(0, dim, 2, dtype=int64).float() / dim), computed in float32.
  for (let i = 0; i < dim / 2; i++) inv[i] = 1 / Math.fround(base ** Math.fround((2 * i) / dim));
  return inv;
}

/**
 * Rotary inverse frequencies (head_dim / 2 of them), as transformers computes them. `seqLen` matters
 * only to dynamic scaling: the length of the forward the table is for (its last position + 1).
 */
export function ropeInverseFrequencies(c: RopeShape, seqLen = 0): Float32Array {
  const s = c.ropeScaling;
  const dim = c.headDim;
  switch (s.type) {
    case "default":
      return baseInverseFrequencies(c.ropeTheta, dim);
    case "linear":
      return baseInverseFrequencies(c.ropeTheta, dim).map((f) => f / s.factor);
    case "llama3":
      return llama3Frequencies(baseInverseFrequencies(c.ropeTheta, dim), s);
    case "yarn":
      return yarnFrequencies(c.ropeTheta, dim, s);
    case "dynamic":
      return baseInverseFrequencies(dynamicBase(c.ropeTheta, dim, s, seqLen), dim);
    default: {
      const never: never = s;
      throw new Error(`unknown rope scaling ${String(never)}`);
    }
  }
}

function llama3Frequencies(inv: Float32Array, s: Extract<RopeScaling, { type: "llama3" }>): Float32Array {
  const lowWavelen = s.originalMaxPositions / s.lowFreqFactor;
  const highWavelen = s.originalMaxPositions / s.highFreqFactor;
  return inv.map((f) => {
    const wavelen = (2 * Math.PI) / f;
    if (wavelen < highWavelen) return f;
    if (wavelen > lowWavelen) return f / s.factor;
    const smooth =
      (s.originalMaxPositions / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
    return (1 - smooth) * (f / s.factor) + smooth * f;
  });
}

/**
 * yarn: interpolate (divide by factor) the low frequencies, keep (extrapolate) the high ones, and ramp
 * linearly between the dimensions whose wavelengths make beta_slow and beta_fast turns over the
 * original context. The correction range is computed in float64 (Python floats), the rest in float32.
 */
function yarnFrequencies(base: number, dim: number, s: Extract<RopeScaling, { type: "yarn" }>): Float32Array {
  const f = Math.fround;
  const correctionDim = (rotations: number) =>
    (dim * Math.log(s.originalMaxPositions / (rotations * 2 * Math.PI))) / (2 * Math.log(base));
  let low = correctionDim(s.betaFast);
  let high = correctionDim(s.betaSlow);
  if (s.truncate) {
    low = Math.floor(low);
    high = Math.ceil(high);
  }
  low = Math.max(low, 0);
  high = Math.min(high, dim - 1);
  if (low === high) high += 0.001; // transformers: prevent a singularity
  const inv = new Float32Array(dim / 2);
  for (let i = 0; i < dim / 2; i++) {
    const posFreq = f(base ** f((2 * i) / dim));
    const extrapolation = f(1 / posFreq);
    const interpolation = f(1 / f(f(s.factor) * posFreq));
    const ramp = Math.min(1, Math.max(0, f(f(i - f(low)) / f(high - low))));
    const keep = f(1 - ramp);
    inv[i] = f(f(interpolation * f(1 - keep)) + f(extrapolation * keep));
  }
  return inv;
}

/** Dynamic NTK's base for a forward of `seqLen` tokens (theta itself up to max_position_embeddings). */
function dynamicBase(
  theta: number,
  dim: number,
  s: Extract<RopeScaling, { type: "dynamic" }>,
  seqLen: number,
) {
  if (seqLen <= s.maxPositions) return theta;
  const f = Math.fround;
  // transformers computes this on a 0-dim float32 tensor: each step rounds to float32.
  const ratio = f(f(f(f(s.factor) * seqLen) / s.maxPositions) - f(s.factor - 1));
  return f(f(theta) * f(ratio ** f(dim / (dim - 2))));
}
