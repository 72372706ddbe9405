// `--speculative-config` (and an InferenceModel's spec.speculative): vLLM's JSON, validated at start-up.
// {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4} proposes by prompt lookup;
// {"model": PATH, "num_speculative_tokens": 4} by a draft model (method "draft_model", implied by
// "model"). prompt_lookup_min/max follow vLLM: one given sets the other, neither means 5 and 5.
// disable_by_batch_size turns proposals off while more requests than that are running, where verifying
// k extra positions per row costs more than the tokens it saves.
import { z } from "zod";
import { Code, TesseraError } from "../../kernel/errors.ts";

const MAX_SPECULATIVE_TOKENS = 16;

const schema = z
  .object({
    method: z.enum(["ngram", "draft_model"]).optional(),
    model: z.string().min(1).optional(),
    num_speculative_tokens: z.int().min(1).max(MAX_SPECULATIVE_TOKENS),
    prompt_lookup_max: z.int().min(1).optional(),
    prompt_lookup_min: z.int().min(1).optional(),
    disable_by_batch_size: z.int().min(1).optional(),
  })
  .strict();

interface Common {
  numSpeculativeTokens: number;
  /** Proposals are off while more requests than this are running; unset: never off. */
  disableByBatchSize: number | undefined;
}

export type SpeculativeConfig =
  | (Common & { method: "ngram"; promptLookupMin: number; promptLookupMax: number })
  | (Common & { method: "draft_model"; model: string });

export type SpeculativeMethod = SpeculativeConfig["method"];

/** Parses the JSON text or object; errors name the field (`speculative_config.<field>: ...`). */
export function parseSpeculativeConfig(raw: unknown): SpeculativeConfig {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw invalid("(root)", `not JSON: ${(err as Error).message}`);
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(issue.path.join(".") || "(root)", issue.message);
  }
  const c = parsed.data;
  const common = {
    numSpeculativeTokens: c.num_speculative_tokens,
    disableByBatchSize: c.disable_by_batch_size,
  };
  const method = c.method ?? (c.model !== undefined ? "draft_model" : undefined);
  if (method === undefined) throw invalid("method", 'set "method": "ngram", or "model" for a draft model');
  if (method === "ngram") {
    if (c.model !== undefined) throw invalid("model", 'the "ngram" method takes no model');
    const max = c.prompt_lookup_max ?? c.prompt_lookup_min ?? 5;
    const min = c.prompt_lookup_min ?? c.prompt_lookup_max ?? 5;
    if (min > max) throw invalid("prompt_lookup_min", `must be <= prompt_lookup_max (${max})`);
    return { method, ...common, promptLookupMin: min, promptLookupMax: max };
  }
  if (c.model === undefined) throw invalid("model", "a draft model needs the path of its checkpoint");
  for (const field of ["prompt_lookup_max", "prompt_lookup_min"] as const)
    if (c[field] !== undefined) throw invalid(field, 'applies to the "ngram" method only');
  return { method, ...common, model: c.model };
}

function invalid(field: string, why: string): TesseraError {
  return new TesseraError(Code.INVALID_ARGUMENT, `speculative_config.${field}: ${why}`);
}
