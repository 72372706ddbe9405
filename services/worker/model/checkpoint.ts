// A Hugging Face checkpoint folder, described without reading its weights: config.json (through the
// architecture registry), generation_config.json (eos ids), and the weights' dtype.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import "../arch/builtin.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { DecoderConfig } from "../arch/decoder-config.ts";
import { type ArchitectureDefinition, resolveArchitecture } from "../arch/registry.ts";
import { WeightStore } from "./weights.ts";

export type ModelDtype = "float32" | "float16" | "bfloat16";

export interface Checkpoint {
  dir: string;
  architecture: ArchitectureDefinition;
  config: DecoderConfig;
  /** Token ids that end generation (generation_config.json, else config.json). */
  eosTokenIds: number[];
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
  const generation = readJson(path.join(dir, "generation_config.json"), false) as
    | { eos_token_id?: unknown }
    | undefined;
  const eos = generation?.eos_token_id;
  const eosTokenIds = Array.isArray(eos)
    ? eos.map(Number)
    : typeof eos === "number"
      ? [eos]
      : config.value.eosTokenIds;
  const weights = WeightStore.open(dir);
  const dtype = DTYPES[weights.dtype()];
  return {
    dir,
    architecture: architecture.value,
    config: config.value,
    eosTokenIds,
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
