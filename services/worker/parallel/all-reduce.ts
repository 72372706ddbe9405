// The all-reduce (sum) of a tensor-parallel group, over the group's links. Each call is named by a key
// (step, micro-batch, segment); parts from a peer may arrive before this rank asks for them.
//
// Algorithm: recursive doubling (a butterfly, the tree-family all-reduce for short messages). In round
// k every rank swaps its running sum with the rank 2^k away and adds: log2(n) rounds, each one network
// hop carrying the whole vector. The tensors reduced here are small and latency-bound: [N, hidden]
// per step, e.g. 16 decode tokens × 4096 floats = 256 KiB, where a ring's 2(n-1) hops cost more than
// its bandwidth saves (ring moves 2(n-1)/n of the vector per rank instead of log2(n) vectors; it wins
// for large prefill batches on wide groups, which is where it would be added). Every pair adds its
// two sums in the same tree, and float addition is commutative, so all ranks end with bit-identical
// sums: the ranks' residual streams never drift apart. A group whose size is not a power of two
// falls back to a direct exchange (every rank sends its part to every other and sums in rank order).
import { Code, TesseraError } from "../../kernel/errors.ts";

/** Names one all-reduce call: every rank of the group makes the same calls with the same keys. */
export interface ReduceKey {
  stepId: bigint;
  microBatch: number;
  segment: number;
}

export type SendPart = (to: number, key: ReduceKey, data: Float32Array) => void;

const idOf = (from: number, k: ReduceKey) => `${from}|${k.stepId}/${k.microBatch}/${k.segment}`;

interface Waiter {
  resolve(data: Float32Array): void;
  reject(err: TesseraError): void;
}

export class AllReduce {
  /** Global ranks of the group, in tensor-rank order. */
  readonly ranks: readonly number[];
  private readonly index: number;
  private readonly send: SendPart;
  private readonly arrived = new Map<string, Float32Array>();
  private readonly waiting = new Map<string, Waiter>();
  private failure: TesseraError | undefined;
  /** Floats sent by this rank (bytes moved = 4 × this). */
  sentFloats = 0;

  constructor(ranks: readonly number[], self: number, send: SendPart) {
    this.ranks = ranks;
    this.index = ranks.indexOf(self);
    if (this.index < 0) throw new Error(`rank ${self} is not in the group ${ranks.join(",")}`);
    this.send = send;
  }

  /** A part from a peer (the network's side). */
  deliver(from: number, key: ReduceKey, data: Float32Array): void {
    const id = idOf(from, key);
    const waiter = this.waiting.get(id);
    if (waiter) {
      this.waiting.delete(id);
      waiter.resolve(data);
    } else this.arrived.set(id, data);
  }

  /** The sum of every rank's `partial` under `key`. */
  async reduce(key: ReduceKey, partial: Float32Array): Promise<Float32Array> {
    const n = this.ranks.length;
    if (n === 1) return partial;
    if ((n & (n - 1)) !== 0) return this.direct(key, partial);
    let sum = partial;
    for (let distance = 1; distance < n; distance *= 2) {
      const peer = this.ranks[this.index ^ distance]!;
      this.post(peer, key, sum);
      sum = add(sum, await this.receive(peer, key));
    }
    return sum;
  }

  private async direct(key: ReduceKey, partial: Float32Array): Promise<Float32Array> {
    for (const peer of this.ranks) if (peer !== this.ranks[this.index]) this.post(peer, key, partial);
    const parts = await Promise.all(
      this.ranks.map((peer, i) => (i === this.index ? partial : this.receive(peer, key))),
    );
    return parts.slice(1).reduce(add, parts[0]!);
  }

  private post(peer: number, key: ReduceKey, data: Float32Array): void {
    this.sentFloats += data.length;
    this.send(peer, key, data);
  }

  private receive(from: number, key: ReduceKey): Promise<Float32Array> {
    if (this.failure) return Promise.reject(this.failure);
    const id = idOf(from, key);
    const data = this.arrived.get(id);
    if (data) {
      this.arrived.delete(id);
      return Promise.resolve(data);
    }
    return new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }

  /** The group is gone: every waiting and later reduce fails. */
  fail(err: TesseraError = new TesseraError(Code.UNAVAILABLE, "the tensor group is gone")): void {
    this.failure ??= err;
    for (const w of this.waiting.values()) w.reject(this.failure);
    this.waiting.clear();
    this.arrived.clear();
  }
}

function add(a: Float32Array, b: Float32Array): Float32Array {
  if (a.length !== b.length)
    throw new TesseraError(Code.INTERNAL, `all-reduce parts differ: ${a.length} vs ${b.length}`);
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! + b[i]!;
  return out;
}
