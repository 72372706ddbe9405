// The architecture registry: each supported Hugging Face architecture registers a definition here
// (see builtin.ts); the core only ever asks the registry. A new architecture is a new file.
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";
import type { DecoderConfig } from "./decoder-config.ts";

/** Names of one layer's tensors in the checkpoint. */
export interface LayerWeightNames {
  inputNorm: string;
  postAttentionNorm: string;
  q: string;
  k: string;
  v: string;
  o: string;
  qBias: string;
  kBias: string;
  vBias: string;
  /** Dense MLP (absent for mixture-of-experts layers). */
  mlp: { gate: string; up: string; down: string } | undefined;
  /** Mixture of experts: the router and each expert's gate (w1), down (w2) and up (w3) projections. */
  moe: { router: string; expert(e: number): { gate: string; up: string; down: string } } | undefined;
}

export interface WeightNames {
  embed: string;
  finalNorm: string;
  lmHead: string;
  layer(i: number): LayerWeightNames;
}

export interface ArchitectureDefinition {
  /** The `architectures[0]` value of config.json, e.g. LlamaForCausalLM. */
  name: string;
  /** config.json `model_type` values that select this architecture when `architectures` is absent. */
  modelTypes: string[];
  parseConfig(raw: unknown): Result<DecoderConfig>;
  weightNames(config: DecoderConfig): WeightNames;
}

const registry = new Map<string, ArchitectureDefinition>();

export function registerArchitecture(def: ArchitectureDefinition): void {
  registry.set(def.name, def);
}

export function supportedArchitectures(): string[] {
  return [...registry.keys()].sort();
}

/** Picks the architecture from config.json's `architectures` (or `model_type`), or an override. */
export function resolveArchitecture(raw: unknown, override?: string): Result<ArchitectureDefinition> {
  const cfg = (typeof raw === "object" && raw !== null ? raw : {}) as {
    architectures?: unknown;
    model_type?: unknown;
  };
  const requested =
    override ?? (Array.isArray(cfg.architectures) ? String(cfg.architectures[0]) : undefined) ?? undefined;
  const def = requested
    ? registry.get(requested)
    : [...registry.values()].find((d) => d.modelTypes.includes(String(cfg.model_type)));
  if (def) return { value: def };
  const what = requested ?? `model_type ${String(cfg.model_type)}`;
  return {
    error: new TesseraError(
      Code.INVALID_ARGUMENT,
      `unsupported architecture ${what}; supported: ${supportedArchitectures().join(", ")}`,
    ),
  };
}
