// What a checkpoint's generation_config.json says about generating: the eos ids, and the sampling its
// authors recommend, which becomes what an unset temperature, top_p, top_k, min_p or repetition_penalty
// means for this model (as vLLM's `--generation-config auto`, its default since 0.6.5).
//
// Rules, beside vLLM's (vllm/config/model.py get_diff_sampling_param):
// - A missing file, or a field missing or null, recommends nothing.
// - `do_sample: false` means what it means to transformers' generate(): greedy decoding, the filters
//   (top_p, top_k, min_p) unused. So the defaults become temperature 0 and repetition_penalty (which
//   transformers applies when greedy too), and the filters are reported as not applied. vLLM ignores
//   do_sample and applies the filters and the temperature; a file without do_sample is read as vLLM does.
// - `top_k` <= 0 is "off" (0), as vLLM's -1. Values are taken as written, also those that equal
//   transformers' defaults (vLLM's to_diff_dict drops those, so a written top_k of 50 is off there).
// - `max_new_tokens` is not applied (the request's max_tokens, else 16, stays the default; vLLM applies
//   it): it is reported with the filters, so start-up logs say what the file holds that Tessera ignores.
// - A value of the wrong type or out of range fails start-up with an error naming the file and field,
//   rather than being skipped.
import path from "node:path";
import {
  DEFAULT_MAX_TOKENS,
  SAMPLING_DEFAULT_FIELDS,
  type SamplingDefaults,
} from "../../inference/sampling-params.ts";
import { type Result, TesseraError } from "../../kernel/errors.ts";

export const GENERATION_CONFIG_FILE = "generation_config.json";

export interface GenerationConfig {
  /** eos_token_id as a list; undefined when the file names none. */
  eosTokenIds: number[] | undefined;
  /** The sampling it recommends: only the fields it sets. */
  sampling: SamplingDefaults;
  /** What it holds that is not applied, and why (logged at start-up). */
  notApplied: string[];
}

type Check = (value: number) => boolean;

/** Each default's range, as a request's (services/inference/sampling-params.ts). */
const RANGES: Record<keyof SamplingDefaults, { integer: boolean; check: Check; range: string }> = {
  temperature: { integer: false, check: (v) => v >= 0, range: ">= 0" },
  topP: { integer: false, check: (v) => v >= 0 && v <= 1, range: "in [0, 1]" },
  topK: { integer: true, check: () => true, range: "an integer" },
  minP: { integer: false, check: (v) => v >= 0 && v <= 1, range: "in [0, 1]" },
  repetitionPenalty: { integer: false, check: (v) => v > 0, range: "> 0" },
};

const FILTERS = ["topP", "topK", "minP"] as const;

/** Reads a parsed generation_config.json (undefined: the file is missing); `dir` names it in errors. */
export function parseGenerationConfig(json: unknown, dir: string): Result<GenerationConfig> {
  if (json === undefined) return { value: { eosTokenIds: undefined, sampling: {}, notApplied: [] } };
  const file = path.join(dir, GENERATION_CONFIG_FILE);
  const problem = (field: string, message: string) => ({
    error: TesseraError.invalidArgument(`${file}: ${field}`, message),
  });
  if (typeof json !== "object" || json === null || Array.isArray(json))
    return problem("(file)", "must be a JSON object");
  const raw = json as {
    eos_token_id?: unknown;
    do_sample?: unknown;
    max_new_tokens?: unknown;
    [field: string]: unknown;
  };

  const eos = eosTokenIds(raw.eos_token_id);
  if (typeof eos === "string") return problem("eos_token_id", eos);

  const sampling: SamplingDefaults = {};
  for (const key of Object.keys(RANGES) as (keyof SamplingDefaults)[]) {
    const field = SAMPLING_DEFAULT_FIELDS[key];
    const value = raw[field];
    if (value === undefined || value === null) continue;
    const { integer, check, range } = RANGES[key];
    if (typeof value !== "number" || !Number.isFinite(value) || (integer && !Number.isInteger(value)))
      return problem(field, integer ? "must be an integer" : "must be a finite number");
    if (!check(value)) return problem(field, `must be ${range}`);
    sampling[key] = key === "topK" ? Math.max(0, value) : value;
  }

  const doSample = raw.do_sample;
  if (doSample !== undefined && doSample !== null && typeof doSample !== "boolean")
    return problem("do_sample", "must be a boolean");
  const notApplied: string[] = [];
  if (doSample === false) {
    if (sampling.temperature !== undefined && sampling.temperature !== 0)
      notApplied.push(`temperature ${sampling.temperature} (do_sample is false: greedy)`);
    sampling.temperature = 0;
    for (const key of FILTERS) {
      if (sampling[key] === undefined) continue;
      notApplied.push(`${SAMPLING_DEFAULT_FIELDS[key]} ${sampling[key]} (do_sample is false: greedy)`);
      delete sampling[key];
    }
  }
  if (raw.max_new_tokens !== undefined && raw.max_new_tokens !== null)
    notApplied.push(
      `max_new_tokens ${raw.max_new_tokens} (the default max_tokens stays ${DEFAULT_MAX_TOKENS})`,
    );
  return { value: { eosTokenIds: eos, sampling, notApplied } };
}

/** The ids, undefined when unset, or what is wrong. */
function eosTokenIds(value: unknown): number[] | undefined | string {
  if (value === undefined || value === null) return undefined;
  const ids: unknown[] = Array.isArray(value) ? value : [value];
  if (!ids.every((id) => Number.isInteger(id) && (id as number) >= 0))
    return "must be a token id or a list of token ids";
  return ids as number[];
}
