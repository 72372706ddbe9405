// Section g of `npm run bench -- engine`: what structured output costs per generated token at 16
// concurrent requests on the engine's model, against the same 16 unconstrained. Both sides decode
// greedily 64 tokens from the same prompts; the schema cannot be complete within 64 tokens (a long
// string, then at least 64 integers), so every constrained request runs all 64 and both sides batch
// the same 16 rows at every step. Each round times both sides back to back (alternating which goes
// first); the best round of each counts. The grammar is compiled before the rounds (one request), and
// that compile time is reported on its own: it is paid once per schema, not per token.

import { greedySampling } from "../../services/inference/sampling-params.ts";
import type { SamplingParams, StructuredOutput } from "../../services/inference/types.ts";
import type { Engine } from "../../services/worker/engine/engine.ts";

export const COST_SCHEMA = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 60 },
    values: { type: "array", items: { type: "integer", minimum: 0, maximum: 999 }, minItems: 64 },
  },
  required: ["title", "values"],
  additionalProperties: false,
};

const STRUCTURED: StructuredOutput = { kind: "json_schema", schema: COST_SCHEMA, strict: true };

export interface StructuredCost {
  /** Milliseconds per generated token (wall time of the 16 / tokens), per round. */
  unconstrainedMsPerToken: number[];
  structuredMsPerToken: number[];
  /** The first constrained request's time to its first token, compile included, vs an unconstrained one's. */
  firstStructuredTtftMs: number;
  unconstrainedTtftMs: number;
  /** Tokens each side generated per round (16 x 64 when nothing ended early). */
  tokensPerRound: { unconstrained: number; structured: number };
  /** The best round's structured / unconstrained ms per token. */
  ratio: number;
}

let nextId = 0;

async function run16(engine: Engine, prompts: number[][], sampling: SamplingParams) {
  const t0 = performance.now();
  const counts = await Promise.all(
    prompts.map(async (promptIds) => {
      let tokens = 0;
      for await (const e of engine.generate({ requestId: `structured-${nextId++}`, promptIds, sampling }))
        if (e.type === "tokens") tokens += e.tokens.length;
      return tokens;
    }),
  );
  const tokens = counts.reduce((a, b) => a + b, 0);
  return { msPerToken: (performance.now() - t0) / tokens, tokens };
}

async function ttft(engine: Engine, promptIds: number[], sampling: SamplingParams): Promise<number> {
  const t0 = performance.now();
  for await (const e of engine.generate({ requestId: `structured-${nextId++}`, promptIds, sampling }))
    if (e.type === "tokens") return performance.now() - t0;
  return Number.NaN;
}

export async function structuredCost(
  engine: Engine,
  prompts: number[][],
  rounds = 3,
): Promise<StructuredCost> {
  const plain = greedySampling({ maxTokens: 64, ignoreEos: true });
  const constrained: SamplingParams = { ...plain, structured: STRUCTURED };
  const unconstrainedTtftMs = await ttft(engine, prompts[0]!, { ...plain, maxTokens: 1 });
  const firstStructuredTtftMs = await ttft(engine, prompts[0]!, { ...constrained, maxTokens: 1 });
  const unconstrained: number[] = [];
  const structured: number[] = [];
  const tokensPerRound = { unconstrained: 0, structured: 0 };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? ["plain", "structured"] : ["structured", "plain"];
    for (const side of order) {
      const r = await run16(engine, prompts, side === "plain" ? plain : constrained);
      if (side === "plain") {
        unconstrained.push(r.msPerToken);
        tokensPerRound.unconstrained = r.tokens;
      } else {
        structured.push(r.msPerToken);
        tokensPerRound.structured = r.tokens;
      }
    }
  }
  return {
    unconstrainedMsPerToken: unconstrained,
    structuredMsPerToken: structured,
    firstStructuredTtftMs,
    unconstrainedTtftMs,
    tokensPerRound,
    ratio: Math.min(...structured) / Math.min(...unconstrained),
  };
}
