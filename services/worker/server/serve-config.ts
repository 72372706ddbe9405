// The one config object of a serving process, validated at start-up.
import path from "node:path";
import { z } from "zod";
import { type Result, TesseraError } from "../../kernel/errors.ts";
import { servedModelNameProblem } from "../../kernel/served-model-name.ts";
import { engineConfigSchema } from "../engine/engine-config.ts";
import { redisKvConfigSchema } from "../kv-transfer/redis-kv-config.ts";
import { blockSizeProblem, PER_CHANNEL } from "../model/quantize-blocks.ts";
import type { SpeculativeConfig } from "../speculative/speculative-config.ts";
import { SERVE_DTYPES } from "./serve-model-flags.ts";

const port = z.int().min(0).max(65_535);

/**
 * Mutual TLS for this worker's gRPC server and its parallel group's links: a folder laid out as a
 * Kubernetes TLS Secret mounts it (tls.crt, tls.key, ca.crt; services/rpc/tls-folder.ts), watched for
 * rotation. Unset: plaintext.
 */
export const TlsConfigSchema = z
  .object({
    dir: z.string().min(1),
    /** The name peers' certificates must carry, where it is not the host dialled (pod IPs). */
    serverName: z.string().min(1).optional(),
  })
  .strict();

/** This worker's place in a parallel replica (pipeline stages x tensor ranks); see services/worker/parallel. */
export const ShardConfigSchema = z
  .object({
    /** Pipeline stage of this worker, 0-based. */
    stage: z.int().min(0),
    stages: z.int().min(1),
    /** Tensor-parallel rank of this worker within its stage, 0-based. */
    tensorRank: z.int().min(0),
    tensorSize: z.int().min(1),
    /** Decoder layers [start, end) of the stage; unset = the even split the operator uses. */
    layers: z.object({ start: z.int().min(0), end: z.int().min(1) }).optional(),
    /** host:port of every worker of the group, by global rank (stage * tensorSize + tensorRank). */
    peers: z.array(z.string().min(1)).min(1),
    /** A hosts-style file peer names are looked up in before DNS: the dev cluster's stand-in for cluster DNS. */
    hostsFile: z.string().min(1).optional(),
    /** How long the group may take to come up (every worker loaded and linked). */
    formationTimeoutMs: z.int().min(1).default(600_000),
    /** A step that takes longer fails the group (a hung peer must not hang requests). */
    stepTimeoutMs: z.int().min(1).default(30_000),
    /** Micro-batches per step, so pipeline stages overlap (1 = none). */
    microBatches: z.int().min(1).default(1),
  })
  .refine((s) => s.stage < s.stages, { path: ["stage"], message: "must be below the number of stages" })
  .refine((s) => s.tensorRank < s.tensorSize, {
    path: ["tensorRank"],
    message: "must be below the tensor size",
  })
  .refine((s) => s.peers.length === s.stages * s.tensorSize, {
    path: ["peers"],
    message: "must list one address per worker of the group (stages x tensor size)",
  })
  .refine((s) => s.layers === undefined || s.layers.start < s.layers.end, {
    path: ["layers"],
    message: "must be a non-empty range",
  });

export type ShardConfig = z.infer<typeof ShardConfigSchema>;

export const ServeConfigSchema = z
  .object({
    /** Checkpoint folder (config.json, model.safetensors, tokenizer.json). */
    modelDir: z.string().min(1),
    /** The model id clients send and ListModels reports; unset = the checkpoint folder's name. */
    servedName: z
      .string()
      .superRefine((name, ctx) => {
        const problem = servedModelNameProblem(name);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional(),
    /** The architecture's registry name (e.g. LlamaForCausalLM); unset = what config.json says. */
    architecture: z.string().min(1).optional(),
    /** Weight dtype to run in (serve-model-flags.ts: dtypeProblem); unset = the checkpoint's. */
    dtype: z.enum(SERVE_DTYPES).optional(),
    /**
     * Weight-only quantization of the projection matrices at load (model/quantize-blocks.ts): bits per
     * weight, input features per block (one scale each) or `channel` (one per output feature, int8
     * only: model/quantize-channels.ts), and whether blocks keep a zero point too (asymmetric). Unset:
     * the weights as the dtype says.
     */
    quantization: z
      .object({
        bits: z.union([z.literal(4), z.literal(8)]),
        blockSize: z.union([z.int(), z.literal(PER_CHANNEL)]),
        symmetric: z.boolean(),
      })
      .strict()
      .superRefine((q, ctx) => {
        const problem = blockSizeProblem(q.blockSize, q.bits);
        if (problem) ctx.addIssue({ code: "custom", path: ["blockSize"], message: problem });
      })
      .optional(),
    /**
     * auto: an unset temperature, top_p, top_k, min_p or repetition_penalty takes the checkpoint's
     * generation_config.json value (model/checkpoint-generation-config.ts); none: the neutral default.
     * Unset: auto.
     */
    generationConfig: z.enum(["auto", "none"]).optional(),
    /** Speculative decoding, as parseSpeculativeConfig returns it (`--speculative-config`); unset: off. */
    speculative: z
      .custom<SpeculativeConfig>((v) => typeof v === "object" && v !== null && "method" in v, {
        message: "parse it with parseSpeculativeConfig",
      })
      .optional(),
    /** Interface to listen on. */
    host: z.string().min(1).default("127.0.0.1"),
    /** gRPC port; 0 picks a free one (logged as `port` in the "serving" line). */
    port: port.default(50051),
    /** Port of the Prometheus /metrics endpoint (0 picks a free one); unset = no endpoint. */
    metricsPort: port.optional(),
    /** How long in-flight calls may run after SIGTERM before they are cancelled. */
    drainTimeoutMs: z.int().min(0).default(30_000),
    /** Engine threads; unset lets the engine choose. */
    threads: z.int().min(1).optional(),
    /** Engine settings (KV pool size, batching limits...); no CLI flags yet, set by programs (benchmarks). */
    engine: engineConfigSchema.optional(),
    /** The remote KV tier (Redis): disaggregated prefill/decode, a shared prefix tier, migration. */
    kv: z
      .object({
        redis: redisKvConfigSchema,
        /** What a missing or unreadable block means: recompute it here, or fail the request. */
        policy: z.enum(["recompute", "fail"]).default("recompute"),
        /** Look prefix blocks up in Redis before computing them. */
        readThrough: z.boolean().default(true),
        /** Store every block this worker fills. */
        writeThrough: z.boolean().default(true),
      })
      .optional(),
    /** Unset: the whole model in this process. Set: this worker's shard of a parallel replica. */
    shard: ShardConfigSchema.optional(),
    /** TLS for the gRPC server and the group's links; unset = plaintext. */
    tls: TlsConfigSchema.optional(),
  })
  .refine((c) => c.metricsPort === undefined || c.metricsPort === 0 || c.metricsPort !== c.port, {
    path: ["metricsPort"],
    message: "must differ from port",
  });

export type ServeConfig = z.infer<typeof ServeConfigSchema>;

/** The name the model is served as: the configured one, else the checkpoint folder's name. */
export function servedNameOf(config: Pick<ServeConfig, "modelDir" | "servedName">): string {
  return config.servedName ?? path.basename(path.resolve(config.modelDir));
}

/** Parses a raw config; the error names the first bad field (e.g. `port: ...`). */
export function parseServeConfig(raw: unknown): Result<ServeConfig> {
  const parsed = ServeConfigSchema.safeParse(raw);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  const field = issue?.path.join(".") || "config";
  return { error: TesseraError.invalidArgument(field, issue?.message ?? "invalid") };
}
