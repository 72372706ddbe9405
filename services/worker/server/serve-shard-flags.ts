// The raw `shard` section of the serve config, from `tessera serve` flags and, where a flag is not
// given, the environment the operator sets on a shard's pod (operator/placement/shard-env.ts):
// TESSERA_STAGE, TESSERA_NUM_STAGES, TESSERA_TENSOR_RANK, TESSERA_TENSOR_SIZE, TESSERA_PEERS (host:port
// of every pod of the group by global rank, comma-separated), TESSERA_LAYER_START / TESSERA_LAYER_END
// (layers [start, end)). A group of one pod (1 stage, tensor size 1) is no shard: the whole model runs.
// TESSERA_HOSTS_FILE, set by the dev cluster's kubelet only, is its stand-in for cluster DNS: peer names
// are looked up there before DNS (services/worker/parallel/peer-hosts.ts).

export interface ShardFlags {
  pipelineStage?: number | undefined;
  pipelineStages?: number | undefined;
  /** Layers [start, end), parsed from `--layers first-last` (inclusive). */
  layers?: { start: number; end: number } | undefined;
  tensorRank?: number | undefined;
  tensorSize?: number | undefined;
  peers?: string | undefined;
  microBatches?: number | undefined;
  groupTimeoutMs?: number | undefined;
  stepTimeoutMs?: number | undefined;
}

/** The shard input for parseServeConfig, or undefined for a single-process worker. */
export function shardInput(
  flags: ShardFlags,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, unknown> | undefined {
  const fromEnv = (name: string) => {
    const v = env[name];
    return v === undefined || v.trim() === "" ? undefined : Number(v);
  };
  const stages = flags.pipelineStages ?? fromEnv("TESSERA_NUM_STAGES") ?? 1;
  const tensorSize = flags.tensorSize ?? fromEnv("TESSERA_TENSOR_SIZE") ?? 1;
  if (stages === 1 && tensorSize === 1) return undefined;
  const start = fromEnv("TESSERA_LAYER_START");
  const end = fromEnv("TESSERA_LAYER_END");
  const layers = flags.layers ?? (start !== undefined && end !== undefined ? { start, end } : undefined);
  const peers = flags.peers ?? env["TESSERA_PEERS"] ?? "";
  const hostsFile = env["TESSERA_HOSTS_FILE"]?.trim();
  return {
    stage: flags.pipelineStage ?? fromEnv("TESSERA_STAGE") ?? 0,
    stages,
    tensorRank: flags.tensorRank ?? fromEnv("TESSERA_TENSOR_RANK") ?? 0,
    tensorSize,
    ...(layers && { layers }),
    peers: peers
      .split(",")
      .map((p) => p.trim())
      .filter((p) => p !== ""),
    ...(hostsFile && { hostsFile }),
    ...(flags.microBatches !== undefined && { microBatches: flags.microBatches }),
    ...(flags.groupTimeoutMs !== undefined && { formationTimeoutMs: flags.groupTimeoutMs }),
    ...(flags.stepTimeoutMs !== undefined && { stepTimeoutMs: flags.stepTimeoutMs }),
  };
}

/** `--layers 0-11` -> layers 0 to 11 inclusive, i.e. [0, 12); returns undefined when malformed. */
export function parseLayerRange(value: string): { start: number; end: number } | undefined {
  const m = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(value);
  if (!m) return undefined;
  const first = Number(m[1]);
  const last = Number(m[2]);
  return last >= first ? { start: first, end: last + 1 } : undefined;
}
