// What a worker pod is told: its shard and KV store through env variables (`tessera serve` reads
// them where no flag is given), its model and engine settings as `tessera serve` flags.
import { WORKER_GRPC_PORT, WORKER_METRICS_PORT } from "../../services/api/group.ts";
import type { InferenceModelSpec } from "../../services/api/inference-model-spec.ts";
import type { Role } from "../../services/api/inference-model-status.ts";
import type { ModelRef, ShardAssignment } from "./planner.ts";

export const MODELS_MOUNT = "/models";

/**
 * Writable scratch space (the root file system is read-only), also TMPDIR. Not /tmp: the dev
 * cluster's kubelet maps every argument under a mount path to the volume's folder, and model
 * folders often live under /tmp.
 */
export const SCRATCH_MOUNT = "/scratch";

export type EnvVar =
  | { name: string; value: string }
  | { name: string; valueFrom: { fieldRef: { fieldPath: string } } }
  | { name: string; valueFrom: { secretKeyRef: { name: string; key: string } } };

/**
 * Prefix of the model's keys in the KV transfer store, deleted with the model. Workers use it as
 * their store's keyPrefix (services/worker/kv-transfer: keys are `${keyPrefix}${modelId}@...`), so
 * two InferenceModels serving the same model id in different namespaces never share blocks.
 */
export function kvKeyPrefix(model: { namespace: string; name: string }): string {
  return `tessera:kv:${model.namespace}:${model.name}:`;
}

/** The URL of a model's KV store (spec.kvTransfer.redis), without its password. */
export function kvStoreUrl(redis: { address: string; db: number }): string {
  return `redis://${redis.address}/${redis.db}`;
}

export function modelDir(spec: InferenceModelSpec): string {
  return spec.model.pvc ? `${MODELS_MOUNT}/${spec.model.path}` : spec.model.path;
}

/** `tessera serve` flags of the engine settings (kvCacheBlocks 0 leaves the size to the engine). */
export function engineArgs(spec: InferenceModelSpec): string[] {
  const e = spec.engine;
  return [
    "--block-size",
    String(e.blockSize),
    ...(e.kvCacheBlocks > 0 ? ["--kv-cache-blocks", String(e.kvCacheBlocks)] : []),
    "--max-batched-tokens",
    String(e.maxNumBatchedTokens),
    "--max-running-requests",
    String(e.maxNumSeqs),
    ...(e.enablePrefixCaching ? [] : ["--no-prefix-caching"]),
  ];
}

export function serveArgs(spec: InferenceModelSpec): string[] {
  return [
    "serve",
    "--model",
    modelDir(spec),
    "--host",
    "$(POD_IP)",
    "--port",
    String(WORKER_GRPC_PORT),
    "--metrics-port",
    String(WORKER_METRICS_PORT),
    ...engineArgs(spec),
  ];
}

/** spec.model.speculative as `tessera serve --speculative-config` reads it (vLLM's JSON). */
export function speculativeConfigJson(spec: InferenceModelSpec): string {
  const s = spec.model.speculative!;
  const draft = s.draftModelPath;
  const model = draft && spec.model.pvc && !draft.startsWith("/") ? `${MODELS_MOUNT}/${draft}` : draft;
  return JSON.stringify({
    method: s.method,
    ...(model && { model }),
    num_speculative_tokens: s.numSpeculativeTokens,
    ...(s.promptLookupMax !== undefined && { prompt_lookup_max: s.promptLookupMax }),
    ...(s.promptLookupMin !== undefined && { prompt_lookup_min: s.promptLookupMin }),
    ...(s.disableByBatchSize !== undefined && { disable_by_batch_size: s.disableByBatchSize }),
  });
}

export function shardEnv(
  model: ModelRef,
  spec: InferenceModelSpec,
  role: Role,
  replica: number,
  shard: ShardAssignment,
): EnvVar[] {
  const value = (name: string, v: string | number) => ({ name, value: String(v) });
  const field = (name: string, fieldPath: string) => ({ name, valueFrom: { fieldRef: { fieldPath } } });
  const env: EnvVar[] = [
    field("POD_IP", "status.podIP"),
    field("POD_NAME", "metadata.name"),
    field("POD_NAMESPACE", "metadata.namespace"),
    value("TMPDIR", SCRATCH_MOUNT),
    value("TESSERA_MODEL_NAME", spec.model.servedName ?? model.name),
    value("TESSERA_ROLE", role),
    value("TESSERA_REPLICA", replica),
    value("TESSERA_STAGE", shard.stage),
    value("TESSERA_NUM_STAGES", shard.numStages),
    value("TESSERA_TENSOR_RANK", shard.rank),
    value("TESSERA_TENSOR_SIZE", shard.tensorSize),
    value("TESSERA_RANK", shard.globalRank),
    value("TESSERA_WORLD_SIZE", shard.worldSize),
    value("TESSERA_PEERS", shard.peers.join(",")),
  ];
  if (shard.layers)
    env.push(value("TESSERA_LAYER_START", shard.layers.start), value("TESSERA_LAYER_END", shard.layers.end));
  if (spec.model.architecture !== "auto") env.push(value("TESSERA_ARCHITECTURE", spec.model.architecture));
  if (spec.model.dtype !== "auto") env.push(value("TESSERA_DTYPE", spec.model.dtype));
  if (spec.model.quantization !== "none") env.push(value("TESSERA_QUANTIZATION", spec.model.quantization));
  if (spec.model.speculative) env.push(value("TESSERA_SPECULATIVE_CONFIG", speculativeConfigJson(spec)));
  const redis = spec.kvTransfer.redis;
  if (redis) {
    env.push(
      value("TESSERA_KV_URL", kvStoreUrl(redis)),
      value("TESSERA_KV_KEY_PREFIX", kvKeyPrefix(model)),
      value("TESSERA_KV_TTL_MS", spec.kvTransfer.ttlSeconds * 1000),
      value("TESSERA_KV_TIMEOUT_MS", spec.kvTransfer.timeoutMs),
      value("TESSERA_KV_FAILURE_POLICY", spec.kvTransfer.failurePolicy),
    );
    if (redis.passwordSecret)
      env.push({ name: "TESSERA_KV_PASSWORD", valueFrom: { secretKeyRef: { ...redis.passwordSecret } } });
  }
  return env;
}
