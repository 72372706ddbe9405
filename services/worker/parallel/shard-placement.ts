// A member's place in its parallel replica, as the operator hands it out (TESSERA_STAGE,
// TESSERA_NUM_STAGES, TESSERA_TENSOR_RANK, TESSERA_TENSOR_SIZE, TESSERA_PEERS, TESSERA_LAYER_START/END)
// or `tessera serve` flags set it, plus the group's timing knobs. A single process has a placement too:
// the one member of a group of one (singleProcess).
import type { TlsSettings } from "../../rpc/tls-credentials.ts";
import type { ShardSpec } from "../graph/shard-graph.ts";
import { COORDINATOR, type GroupLayout, globalRank, stageLayers } from "./group-layout.ts";

export interface ShardPlacement {
  stage: number;
  stages: number;
  tensorRank: number;
  tensorSize: number;
  /** Decoder layers [start, end) of the stage; unset = the even split (the operator's). */
  layers?: { start: number; end: number } | undefined;
  /** host:port of every member, by global rank (stage * tensorSize + rank). */
  peers: string[];
  /**
   * A hosts-style file to resolve peer names through before DNS (TESSERA_HOSTS_FILE): the dev cluster's
   * stand-in for cluster DNS, kept by its kubelet (peer-hosts.ts). Unset on real Kubernetes.
   */
  hostsFile?: string | undefined;
  /** How long members wait for the whole group to come up. */
  formationTimeoutMs: number;
  /** A step not finished by then fails the group (a hung member must not hang requests); Infinity = none. */
  stepTimeoutMs: number;
  /** Micro-batches per step (pipeline overlap); 1 = none. */
  microBatches: number;
  /** Mutual TLS on the links (each member thread watches the folder itself); unset = plaintext. */
  tls?: TlsSettings | undefined;
}

/**
 * A single process: the one member of a group of one, the whole model on one stage and one rank. It has
 * no peers to wait for, so no step deadline (a long prefill on a large model is not a hung member).
 */
export function singleProcess(): ShardPlacement {
  return {
    stage: 0,
    stages: 1,
    tensorRank: 0,
    tensorSize: 1,
    peers: [],
    formationTimeoutMs: 60_000,
    stepTimeoutMs: Number.POSITIVE_INFINITY,
    microBatches: 1,
  };
}

/**
 * Virtual engines rank 0 runs by default (engine.virtualEngines): one batch in flight per pipeline stage,
 * so that every stage has work, as vLLM does. A tensor-parallel group without stages keeps one: a second
 * batch could compute while the first waits for its all-reduces, but on shared cores (bench/suites/
 * parallel.ts) the smaller batches cost more than the overlap gave; `--virtual-engines 2` asks for it.
 */
export function defaultVirtualEngines(p: Pick<ShardPlacement, "stages">): number {
  return p.stages;
}

export function layoutOf(p: ShardPlacement): GroupLayout {
  return { stages: p.stages, tensorSize: p.tensorSize };
}

export function selfRank(p: ShardPlacement): number {
  return globalRank(layoutOf(p), { stage: p.stage, rank: p.tensorRank });
}

export function isCoordinator(p: ShardPlacement): boolean {
  return selfRank(p) === COORDINATOR;
}

export function shardSpec(p: ShardPlacement, numLayers: number): ShardSpec {
  return {
    layers: p.layers ?? stageLayers(numLayers, p.stages, p.stage),
    tensor: { rank: p.tensorRank, size: p.tensorSize },
  };
}

/** What every member must agree on: the weights, the group's shape and the KV pool's block ids. */
export function groupKey(
  p: ShardPlacement,
  revision: string,
  pool: { numBlocks: number; blockSize: number },
): string {
  return `${revision}|pp${p.stages}|tp${p.tensorSize}|kv${pool.numBlocks}x${pool.blockSize}`;
}

/** Checks that the members' layer ranges tile the model (rank 0, once every member has reported). */
export function layerCoverageProblem(
  layout: GroupLayout,
  reports: ReadonlyMap<number, { layerStart: number; layerEnd: number }>,
  numLayers: number,
): string | undefined {
  let expectedStart = 0;
  for (let stage = 0; stage < layout.stages; stage++) {
    const ranges = Array.from({ length: layout.tensorSize }, (_, rank) =>
      reports.get(globalRank(layout, { stage, rank })),
    );
    const first = ranges[0];
    if (
      !first ||
      ranges.some((r) => !r || r.layerStart !== first.layerStart || r.layerEnd !== first.layerEnd)
    )
      return `the tensor ranks of stage ${stage} do not hold the same layers`;
    if (first.layerStart !== expectedStart)
      return `stage ${stage} starts at layer ${first.layerStart}, expected ${expectedStart}`;
    expectedStart = first.layerEnd;
  }
  if (expectedStart !== numLayers)
    return `the stages end at layer ${expectedStart}, the model has ${numLayers}`;
  return undefined;
}
