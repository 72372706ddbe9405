// Engine settings, validated at start-up.
import { z } from "zod";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { ATTENTION_BACKENDS } from "../graph/attention-backend.ts";

export const engineConfigSchema = z
  .object({
    /** Tokens per KV block. */
    blockSize: z.number().int().min(1).max(256).default(16),
    /** KV pool size in blocks; when unset it follows kvCacheBytes. */
    kvCacheBlocks: z.number().int().min(1).optional(),
    /** KV pool size in bytes (keys and values of every layer), used when kvCacheBlocks is unset. */
    kvCacheBytes: z
      .number()
      .int()
      .min(1)
      .default(512 * 1024 * 1024),
    /**
     * Tokens computed per step over all requests; long prompts are prefilled in chunks of this budget.
     * 256 (issue 18): a prefill chunk's attention scores are [heads, chunk, past + chunk] floats, 12.6 MB
     * per tensor at 512 tokens on the base preset, and onnxruntime's CPU arena keeps the regions of the
     * largest step for good (grown by doubling). `tessera serve` after 4 rounds of 64 streams (bench
     * engine, f) held 1145-1164 MiB at 256 against 1228-1261 at 512, its rounds as fast (20-24 s and
     * 21-25 s); a chunk of 256 tokens still reads the weights once per 256 tokens.
     */
    maxNumBatchedTokens: z.number().int().min(1).default(256),
    /** Requests running at once; more wait in the queue. */
    maxNumSeqs: z.number().int().min(1).default(64),
    enablePrefixCaching: z.boolean().default(true),
    /** Attention implementation: "auto" times the available ones at load and keeps the fastest. */
    attention: z.enum(["auto", ...ATTENTION_BACKENDS]).default("auto"),
    /**
     * Scheduling loops driving the model at once, each with its own requests and share of the KV pool
     * (virtual-engines.ts), so a parallel group works on several batches at once: while one batch is in
     * stage 1, the next is in stage 0. Unset: 1 (serve.ts picks one per pipeline stage for a group).
     */
    virtualEngines: z.number().int().min(1).max(16).optional(),
    /** onnxruntime intra-op threads (0 = all cores). */
    threads: z.number().int().min(0).default(0),
  })
  .strict();

export type EngineConfig = z.infer<typeof engineConfigSchema>;
export type EngineConfigInput = z.input<typeof engineConfigSchema>;

export function parseEngineConfig(raw: unknown): EngineConfig {
  const parsed = engineConfigSchema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new TesseraError(
    Code.INVALID_ARGUMENT,
    `engine config ${issue.path.join(".") || "(root)"}: ${issue.message}`,
  );
}

/** Blocks in the pool: as configured, else as many as the byte budget allows (never more than all sequences at full context need). */
export function poolBlocks(
  config: EngineConfig,
  model: { numLayers: number; numKvHeads: number; headDim: number; maxContext: number },
): number {
  if (config.kvCacheBlocks !== undefined) return config.kvCacheBlocks;
  const byBytes = Math.floor(config.kvCacheBytes / kvBlockBytes(config, model));
  const enough = Math.ceil(model.maxContext / config.blockSize) * config.maxNumSeqs;
  return Math.max(1, Math.min(byBytes, enough));
}

/** Bytes of one KV block: keys and values (float32) of every layer and KV head for blockSize tokens. */
export function kvBlockBytes(
  config: Pick<EngineConfig, "blockSize">,
  model: { numLayers: number; numKvHeads: number; headDim: number },
): number {
  return 2 * model.numLayers * config.blockSize * model.numKvHeads * model.headDim * 4;
}
