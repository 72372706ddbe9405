// Who is who in a parallel replica (pure). A group is `stages` pipeline stages × `tensorSize` tensor
// ranks; member (stage s, rank t) has global rank g = s * tensorSize + t, as the operator's placement
// numbers them (operator/placement/planner.ts) and lists their addresses in TESSERA_PEERS. Global rank 0
// (stage 0, tensor rank 0) is the coordinator: it serves tessera.v1.Inference, schedules and samples.
//
// Links (one persistent ShardLink stream per pair, opened by the lower global rank):
//   star      0 <-> every member: steps' logits, KV export/import, readiness and failure reach rank 0
//             directly, so the death of any member is seen by the coordinator at once;
//   tensor    every pair of ranks of a stage: the all-reduces;
//   pipeline  (s, t) <-> (s + 1, t): hidden states flow stage to stage, rank to rank.
export interface GroupLayout {
  stages: number;
  tensorSize: number;
}

export interface Member {
  stage: number;
  rank: number;
}

export const COORDINATOR = 0;

export function globalRank(layout: GroupLayout, m: Member): number {
  return m.stage * layout.tensorSize + m.rank;
}

export function memberOf(layout: GroupLayout, global: number): Member {
  return { stage: Math.floor(global / layout.tensorSize), rank: global % layout.tensorSize };
}

export function groupSize(layout: GroupLayout): number {
  return layout.stages * layout.tensorSize;
}

/** Global ranks of the other tensor ranks of `self`'s stage, in rank order. */
export function tensorPeers(layout: GroupLayout, self: number): number[] {
  const { stage } = memberOf(layout, self);
  return Array.from({ length: layout.tensorSize }, (_, r) => globalRank(layout, { stage, rank: r })).filter(
    (g) => g !== self,
  );
}

/** The same tensor rank on the next stage, or undefined on the last stage. */
export function nextStage(layout: GroupLayout, self: number): number | undefined {
  const m = memberOf(layout, self);
  return m.stage + 1 < layout.stages ? globalRank(layout, { stage: m.stage + 1, rank: m.rank }) : undefined;
}

/** Every member `self` holds a link with, sorted. */
export function linkPeers(layout: GroupLayout, self: number): number[] {
  const peers = new Set<number>(tensorPeers(layout, self));
  const m = memberOf(layout, self);
  const next = nextStage(layout, self);
  if (next !== undefined) peers.add(next);
  if (m.stage > 0) peers.add(globalRank(layout, { stage: m.stage - 1, rank: m.rank }));
  if (self === COORDINATOR) for (let g = 1; g < groupSize(layout); g++) peers.add(g);
  else peers.add(COORDINATOR);
  return [...peers].sort((a, b) => a - b);
}

/** The peers `self` dials (higher global ranks); it accepts links from the lower ones. */
export function dialedPeers(layout: GroupLayout, self: number): number[] {
  return linkPeers(layout, self).filter((g) => g > self);
}

/**
 * Layers [start, end) of each stage: contiguous, sizes differing by at most one, the larger first.
 * The same split as the operator's (operator/placement/layer-ranges.ts), for workers started without
 * an explicit layer range.
 */
export function stageLayers(
  numLayers: number,
  stages: number,
  stage: number,
): { start: number; end: number } {
  const base = Math.floor(numLayers / stages);
  const extra = numLayers % stages;
  const start = stage * base + Math.min(stage, extra);
  return { start, end: start + base + (stage < extra ? 1 : 0) };
}
