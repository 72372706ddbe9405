// A Hugging Face checkpoint folder, described without reading its weights: config.json (through the
// architecture registry), generation_config.json (eos ids and recommended sampling,
// checkpoint-generation-config.ts), and the weights' dtype.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import "../arch/builtin.ts";
import type { SamplingDefaults } from "../../inference/sampling-params.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { DecoderConfig } from "../arch/decoder-config.ts";
import { type ArchitectureDefinition, resolveArchitecture } from "../arch/registry.ts";
import { GENERATION_CONFIG_FILE, parseGenerationConfig } from "./checkpoint-generation-config.ts";
import { WeightStore } from "./weights.ts";

export type ModelDtype = "float32" | "float16" | "bfloat16";

export interface Checkpoint {
  dir: string;
  architecture: ArchitectureDefinition;
  config: DecoderConfig;
  /** Token ids that end generation (generation_config.json, else config.json). */
  eosTokenIds: number[];
  /** The sampling generation_config.json recommends (what an unset request field means), and what it
   * holds that is not applied, with why; `tessera serve --generation-config none` leaves them unused. */
  generation: { sampling: SamplingDefaults; notApplied: string[] };
  dtype: ModelDtype;
  /** Names these weights and config: a hash of config.json and the safetensors headers. */
  revision: string;
}

const DTYPES = { F32: "float32", F16: "float16", BF16: "bfloat16" } as const;

export function describeCheckpoint(dir: string, architectureOverride?: string): Checkpoint {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new TesseraError(Code.NOT_FOUND, `model folder ${dir} does not exist`);
  }
  const raw = readJson(path.join(dir, "config.json"), true);
  const architecture = resolveArchitecture(raw, architectureOverride);
  if (architecture.error) throw architecture.error;
  const config = architecture.value.parseConfig(raw);
  if (config.error) throw config.error;
  const generation = parseGenerationConfig(readJson(path.join(dir, GENERATION_CONFIG_FILE), false), dir);
  if (generation.error) throw generation.error;
  const { eosTokenIds = config.value.eosTokenIds, sampling, notApplied } = generation.value;
  const weights = WeightStore.open(dir);
  const dtype = DTYPES[weights.dtype()];
  return {
    dir,
    architecture: architecture.value,
    config: config.value,
    eosTokenIds,
    generation: { sampling, notApplied },
    dtype,
    revision: revisionOf(dir, weights),
  };
}

/** A short hash of config.json and every weight's name, dtype, shape and byte range. */
function revisionOf(dir: string, weights: WeightStore): string {
  const h = createHash("sha256").update(fs.readFileSync(path.join(dir, "config.json")));
  for (const name of weights.names().sort()) h.update(`${name}:${weights.shape(name).join("x")};`);
  return h.digest("hex").slice(0, 16);
}

function readJson(file: string, required: boolean): unknown {
  if (!fs.existsSync(file)) {
    if (!required) return undefined;
    throw new TesseraError(Code.NOT_FOUND, `${file} is missing (not a Hugging Face checkpoint folder?)`);
  }
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new TesseraError(Code.INVALID_ARGUMENT, `${file} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
