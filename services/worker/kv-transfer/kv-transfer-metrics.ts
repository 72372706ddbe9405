// Metrics of the KV block store: blocks by operation and result (hits, misses, checksum failures,
// mismatches, errors), bytes moved, failed operations by status code and operation latency. The same
// counts are kept in memory (snapshot()) for tests and for callers that report fallbacks.
import type { Attributes, Counter, Histogram, Meter } from "@opentelemetry/api";
import { Code } from "../../kernel/errors.ts";
import { LATENCY_BUCKETS } from "../../kernel/telemetry/metrics.ts";

export type KvOp = "put" | "get" | "has" | "delete";
export type KvBlockResult = "stored" | "hit" | "miss" | "checksum_failure" | "mismatch" | "error";

export interface KvTransferStats {
  /** `${op}.${result}` -> blocks, e.g. "get.hit". */
  blocks: Record<string, number>;
  bytesIn: number;
  bytesOut: number;
  /** `${op}.${code name}` -> failed operations, e.g. "get.UNAVAILABLE". */
  failures: Record<string, number>;
}

export class KvTransferMetrics {
  readonly #labels: Attributes;
  readonly #blocks: Counter | undefined;
  readonly #bytes: Counter | undefined;
  readonly #failures: Counter | undefined;
  readonly #duration: Histogram | undefined;
  readonly #stats: KvTransferStats = { blocks: {}, bytesIn: 0, bytesOut: 0, failures: {} };

  /** Without a meter only the in-memory counts are kept. */
  constructor(meter: Meter | undefined, labels: Attributes = {}) {
    this.#labels = labels;
    this.#blocks = meter?.createCounter("tessera_kv_transfer_blocks", {
      description:
        "KV blocks by operation and result (stored, hit, miss, checksum_failure, mismatch, error).",
      unit: "{block}",
    });
    this.#bytes = meter?.createCounter("tessera_kv_transfer_bytes", {
      description: "Bytes of KV block values written to (out) and read from (in) Redis.",
      unit: "By",
    });
    this.#failures = meter?.createCounter("tessera_kv_transfer_failed_operations", {
      description: "KV store operations that failed as a whole, by operation and status code.",
      unit: "{operation}",
    });
    this.#duration = meter?.createHistogram("tessera_kv_transfer_duration_seconds", {
      description: "Duration of KV store operations (one batch of blocks).",
      unit: "s",
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS },
    });
    // The results of reads and writes start at 0 (checksum failures included), so alerts and
    // dashboards see their series before the first one happens.
    for (const result of ["hit", "miss", "checksum_failure", "mismatch", "error"] as const)
      this.#blocks?.add(0, { ...labels, op: "get", result });
    for (const result of ["stored", "error"] as const) this.#blocks?.add(0, { ...labels, op: "put", result });
  }

  blocks(op: KvOp, result: KvBlockResult, count = 1): void {
    if (count === 0) return;
    this.#blocks?.add(count, { ...this.#labels, op, result });
    const key = `${op}.${result}`;
    this.#stats.blocks[key] = (this.#stats.blocks[key] ?? 0) + count;
  }

  bytes(direction: "in" | "out", bytes: number): void {
    this.#bytes?.add(bytes, { ...this.#labels, direction });
    if (direction === "in") this.#stats.bytesIn += bytes;
    else this.#stats.bytesOut += bytes;
  }

  failed(op: KvOp, code: Code): void {
    const name = Code[code] ?? String(code);
    this.#failures?.add(1, { ...this.#labels, op, code: name });
    const key = `${op}.${name}`;
    this.#stats.failures[key] = (this.#stats.failures[key] ?? 0) + 1;
  }

  duration(op: KvOp, seconds: number): void {
    this.#duration?.record(seconds, { ...this.#labels, op });
  }

  snapshot(): KvTransferStats {
    return structuredClone(this.#stats);
  }
}
