// The model shapes `tessera model create` offers: four architectures × three sizes.
import { TesseraError } from "../../services/kernel/errors.ts";
import type { CheckpointDtype } from "./hf-config.ts";

export const ARCHS = ["llama", "mistral", "qwen2", "mixtral"] as const;
export type Arch = (typeof ARCHS)[number];

export const PRESETS = ["tiny", "small", "base"] as const;
export type PresetName = (typeof PRESETS)[number];

export interface ModelSpec {
  readonly arch: Arch;
  readonly preset: PresetName;
  readonly hiddenSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** Per expert for Mixtral. */
  readonly intermediateSize: number;
  /** The model's vocab (embedding rows); the trained tokenizer may have fewer tokens. */
  readonly vocabSize: number;
  readonly maxPositionEmbeddings: number;
  readonly ropeTheta: number;
  readonly rmsNormEps: number;
  readonly tieWordEmbeddings: boolean;
  /** q/k/v projection biases (Qwen2). */
  readonly qkvBias: boolean;
  /** 0 for dense models. */
  readonly numExperts: number;
  readonly expertsPerToken: number;
  /** Standard deviation of the random weights: 0.02 × a gain that keeps outputs far from uniform. */
  readonly initStd: number;
}

interface Size {
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  intermediateSize: number;
  /** Mixtral's per-expert intermediate size: smaller, so that 4 experts stay near the dense size. */
  expertIntermediateSize: number;
  vocabSize: number;
  maxPositionEmbeddings: number;
  /** ×8 at hidden 96 as the reference checkpoints, shrinking as 1/√hidden. */
  gain: number;
}

const SIZES: Readonly<Record<PresetName, Size>> = {
  tiny: {
    hiddenSize: 96,
    numLayers: 2,
    numHeads: 6,
    numKvHeads: 2,
    intermediateSize: 256,
    expertIntermediateSize: 256,
    vocabSize: 512,
    maxPositionEmbeddings: 512,
    gain: 8,
  },
  small: {
    hiddenSize: 256,
    numLayers: 4,
    numHeads: 8,
    numKvHeads: 4,
    intermediateSize: 688,
    expertIntermediateSize: 344,
    vocabSize: 2048,
    maxPositionEmbeddings: 2048,
    gain: 5,
  },
  base: {
    hiddenSize: 768,
    numLayers: 12,
    numHeads: 12,
    numKvHeads: 4,
    intermediateSize: 2048,
    expertIntermediateSize: 768,
    vocabSize: 8192,
    maxPositionEmbeddings: 2048,
    gain: 3,
  },
};

interface ArchTraits {
  ropeTheta: number;
  rmsNormEps: number;
  tieWordEmbeddings: boolean;
  qkvBias: boolean;
  numExperts: number;
  expertsPerToken: number;
}

/** As the reference checkpoints (and the transformers defaults they were made with). */
const TRAITS: Readonly<Record<Arch, ArchTraits>> = {
  llama: {
    ropeTheta: 10000,
    rmsNormEps: 1e-6,
    tieWordEmbeddings: false,
    qkvBias: false,
    numExperts: 0,
    expertsPerToken: 0,
  },
  mistral: {
    ropeTheta: 10000,
    rmsNormEps: 1e-6,
    tieWordEmbeddings: false,
    qkvBias: false,
    numExperts: 0,
    expertsPerToken: 0,
  },
  qwen2: {
    ropeTheta: 1e6,
    rmsNormEps: 1e-6,
    tieWordEmbeddings: true,
    qkvBias: true,
    numExperts: 0,
    expertsPerToken: 0,
  },
  mixtral: {
    ropeTheta: 1e6,
    rmsNormEps: 1e-5,
    tieWordEmbeddings: false,
    qkvBias: false,
    numExperts: 4,
    expertsPerToken: 2,
  },
};

export function isArch(s: string): s is Arch {
  return (ARCHS as readonly string[]).includes(s);
}

export function isPreset(s: string): s is PresetName {
  return (PRESETS as readonly string[]).includes(s);
}

export function parseArch(s: string): Arch {
  if (!isArch(s))
    throw TesseraError.invalidArgument("arch", `unknown architecture "${s}"; valid: ${ARCHS.join(", ")}`);
  return s;
}

export function parsePreset(s: string): PresetName {
  if (!isPreset(s))
    throw TesseraError.invalidArgument("preset", `unknown preset "${s}"; valid: ${PRESETS.join(", ")}`);
  return s;
}

/** The full shape of `arch` at `preset`; throws a TesseraError naming the valid values for unknown ones. */
export function modelSpec(arch: string, preset: string): ModelSpec {
  const a = parseArch(arch);
  const p = parsePreset(preset);
  const size = SIZES[p];
  const traits = TRAITS[a];
  return {
    arch: a,
    preset: p,
    hiddenSize: size.hiddenSize,
    numLayers: size.numLayers,
    numHeads: size.numHeads,
    numKvHeads: size.numKvHeads,
    headDim: size.hiddenSize / size.numHeads,
    intermediateSize: traits.numExperts > 0 ? size.expertIntermediateSize : size.intermediateSize,
    vocabSize: size.vocabSize,
    maxPositionEmbeddings: size.maxPositionEmbeddings,
    initStd: 0.02 * size.gain,
    ...traits,
  };
}

/** The weight dtypes a checkpoint can be written in. */
export const CHECKPOINT_DTYPES: readonly CheckpointDtype[] = ["float32", "float16", "bfloat16"];

/** Rope variants a checkpoint can be made with: none, or Llama 3.1's frequency-dependent scaling. */
export const ROPE_SCALINGS = ["llama3"] as const;
export type RopeScalingName = (typeof ROPE_SCALINGS)[number];
