// Counters of a member, in shared memory: its member thread adds, its event loop reads (for /metrics
// and the benchmark) without a message. Payload bytes sent by frame kind, and where a step's time goes:
// steps and their wall time (rank 0), shard runs and their compute time, all-reduces and the time spent
// waiting for the peers' parts.
export const SHARD_COUNTERS = [
  "sent_bytes_tokens",
  "sent_bytes_activation",
  "sent_bytes_reduce",
  "sent_bytes_logits",
  "sent_bytes_sampled",
  "sent_bytes_kvImport",
  "sent_bytes_kvReply",
  "steps",
  "step_seconds",
  "runs",
  "run_seconds",
  "reduces",
  "reduce_wait_seconds",
] as const;

export type ShardCounter = (typeof SHARD_COUNTERS)[number];

export class ShardStats {
  readonly buffer: SharedArrayBuffer;
  private readonly values: Float64Array;

  constructor(buffer = new SharedArrayBuffer(SHARD_COUNTERS.length * 8)) {
    this.buffer = buffer;
    this.values = new Float64Array(buffer);
  }

  add(counter: ShardCounter, value: number): void {
    this.values[SHARD_COUNTERS.indexOf(counter)]! += value;
  }

  /** Bytes of a frame sent (kinds outside the list are control frames and not counted). */
  sent(kind: string, bytes: number): void {
    const i = SHARD_COUNTERS.indexOf(`sent_bytes_${kind}` as ShardCounter);
    if (i >= 0) this.values[i]! += bytes;
  }

  read(): Record<ShardCounter, number> {
    return Object.fromEntries(SHARD_COUNTERS.map((c, i) => [c, this.values[i]!])) as Record<
      ShardCounter,
      number
    >;
  }
}
