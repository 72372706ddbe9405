// n > 1 and best_of: a request's sequences share one prefill. The first sequence is scheduled alone;
// the others wait on it (EngineRequest.forks) and, once its prompt is computed, fork from it as vLLM's
// v0 engine did: each takes a reference to the prompt's full KV blocks (the pool's ref counts keep them
// until the last sequence lets go) and a copy of the partial tail block, which each sequence goes on
// writing its own tokens into. The copy is an export and an import of one block through the runner (the
// same calls the remote KV tier uses, so a parallel group copies on every member); the engine awaits it
// before the next step, so no sequence reads the block before it holds the prompt's K/V. The first
// token of every sequence is sampled from the parent's last logits row, each with its own seed.

import type { KvCacheManager } from "../kv/kv-cache-manager.ts";
import type { ModelRunner } from "../runtime/model-runner.ts";
import { type EngineRequest, RequestStatus } from "./request.ts";

/**
 * Gives each of `forks` the parent's prompt blocks (full ones shared, the tail copied) and marks its
 * prompt computed; a fork the pool has no block for is left without blocks (it computes its prompt
 * itself). Returns the pending copy of the tail block, if any.
 */
export function forkSequences(
  parent: EngineRequest,
  forks: readonly EngineRequest[],
  kv: KvCacheManager,
  runner: Pick<ModelRunner, "exportBlocks" | "importBlocks">,
): Promise<void> | undefined {
  const bs = kv.blockSize;
  const length = parent.promptLength;
  const full = Math.floor(length / bs);
  const shared = {
    blocks: parent.kv.blocks.slice(0, full),
    hashes: parent.kv.hashes.slice(0, full),
  };
  const copies: number[] = [];
  for (const child of forks) {
    if (!kv.allocate(child.kv, length, shared)) continue;
    child.numComputedTokens = length;
    child.forked = true;
    child.status = RequestStatus.WAITING;
    child.timings.submitted = parent.timings.submitted;
    child.timings.firstScheduled = parent.timings.firstScheduled;
    if (length % bs !== 0) copies.push(child.kv.blocks[full]!);
  }
  if (copies.length === 0) return undefined;
  const tail = parent.kv.blocks[full]!;
  return runner.exportBlocks([tail]).then((data) => {
    const all = new Float32Array(data.length * copies.length);
    for (let i = 0; i < copies.length; i++) all.set(data, i * data.length);
    return runner.importBlocks(copies, all);
  });
}
