// Messages between a member's event loop (member-handle.ts) and its member thread (member-thread.ts),
// the model thread of every process, a single process (a group of one) included. The thread owns
// everything on a step's path: the shard's sessions and KV pool, the links to the peers, the
// all-reduces and, on rank 0, the coordination of each step. The event loop only starts it, hands it
// steps (rank 0) and learns when the group is ready or gone.
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import type { ModelRunner, ModelRunnerOptions, SampledRow } from "../runtime/model-runner.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import type { ShardPlacement } from "./shard-placement.ts";

export interface MemberThreadOptions extends ModelRunnerOptions {
  placement: ShardPlacement;
  /** Where a member other than rank 0 serves its ShardLink and health (0 = a free port). */
  listen?: { host: string; port: number } | undefined;
  /** Log level of the thread's structured logs. */
  logLevel: string;
  /** The member's counters (shard-stats.ts), written by the thread. */
  stats: SharedArrayBuffer;
}

export type ToMember =
  /** Rank 0: one engine step. */
  | { type: "step"; id: number; tokens: Int32Array; seqs: SequenceStep[] }
  | { type: "export"; id: number; blocks: number[] }
  | { type: "import"; id: number; blocks: number[]; data: Float32Array }
  | { type: "close" };

export type FromMember =
  /** A member other than rank 0 serves its links and health on `port`. */
  | { type: "listening"; port: number }
  /** The whole group is wired (rank 0: every member reported; others: rank 0 said so). */
  | {
      type: "ready";
      attention: AttentionBackendName;
      attentionTimings: ModelRunner["attentionTimings"];
      attentionRejected: ModelRunner["attentionRejected"];
      graphBytes: number;
      segments: number;
    }
  /** A step's result: logits rows, or (the last stage sampled) empty logits and the sampled rows. */
  | { type: "logits"; id: number; logits: Float32Array; tokens?: SampledRow[]; runMs: number }
  | { type: "blocks"; id: number; data: Float32Array }
  | { type: "done"; id: number }
  | { type: "error"; id: number | undefined; code: number; message: string }
  /** The group failed (for good); every later call fails with this message. */
  | { type: "failed"; message: string };
