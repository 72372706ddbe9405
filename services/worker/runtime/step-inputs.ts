// Turns one scheduled step (the sequences, how many of their tokens are cached and how many are new,
// and their block tables) into the index and mask tensors of the decoder graph (graph/shard-graph.ts).
// Pure: no onnxruntime.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import { ropeDependsOnLength, ropeInverseFrequencies } from "../arch/rope.ts";
import { ATTENTION_GROUPS, type AttentionGroup } from "../graph/graph-names.ts";
import type { RowSampling } from "../sampling/sampler.ts";

export interface SequenceStep {
  /** Tokens already in the cache (positions 0..numPast-1). */
  numPast: number;
  /** Tokens computed this step (positions numPast..numPast+numNew-1). */
  numNew: number;
  /** Block ids holding the sequence's tokens, in order. */
  blockTable: number[];
  /** Whether the next-token logits after this step's last token are wanted. */
  needsLogits: boolean;
  /**
   * With needsLogits: logits rows of this step's last numLogits tokens, in order (default 1). A
   * speculative step's row (the last token and k proposals) asks for k + 1: each proposal's
   * verification and the token after the last one. Never with promptLogits (see logitRowCount).
   */
  numLogits?: number;
  /**
   * The logits of every new token are wanted (a request's prompt logprobs), not only the last: rows for
   * positions numPast..numPast+numNew-1 come back, the last one being the needsLogits row when set.
   */
  promptLogits?: boolean;
  /** For a runner that samples (ModelRunner.samplesRows): how to sample this row's next token. */
  sampling?: RowSampling;
  /**
   * Tokens of the request's prompt, which dynamic rope rotates for the prompt's whole length (see
   * tokenRope). Unset: this step is taken as the forward, numPast + numNew long.
   */
  promptLength?: number;
}

export interface GroupTensors {
  batch: number;
  queries: number;
  past: number;
  /** Cached tokens of each sequence (0 for padding rows). */
  numPast: number[];
  queryIndex: BigInt64Array;
  pastIndex: BigInt64Array;
  bias: Float32Array;
}

export interface StepInputs {
  positions: BigInt64Array;
  groups: Record<AttentionGroup, GroupTensors>;
  unpadIndex: BigInt64Array;
  logitsIndex: BigInt64Array;
  /** Pool slot of each new token, where its K/V is written after the run. */
  newSlots: Int32Array;
  /** Each token's rotary inverse frequencies [tokens, head_dim / 2], for dynamic rope only. */
  ropeInverseFrequencies: Float32Array | undefined;
}

/** What of the model shapes a step's inputs: the attention window and the rotary embedding. */
export type StepModel = Pick<DecoderConfig, "slidingWindow" | "headDim" | "ropeTheta" | "ropeScaling">;

export function slotOf(blockTable: readonly number[], position: number, blockSize: number): number {
  return blockTable[Math.floor(position / blockSize)]! * blockSize + (position % blockSize);
}

/** Decode sequences (one new token) go to the decode group, all others to the prefill group. */
export function groupOf(seq: SequenceStep): AttentionGroup {
  return seq.numNew === 1 ? "decode" : "prefill";
}

export function buildStepInputs(
  seqs: readonly SequenceStep[],
  blockSize: number,
  model?: StepModel,
): StepInputs {
  const slidingWindow = model?.slidingWindow;
  const numTokens = seqs.reduce((n, s) => n + s.numNew, 0);
  const positions = new BigInt64Array(numTokens);
  const newSlots = new Int32Array(numTokens);
  const offsets: number[] = [];
  let offset = 0;
  for (const s of seqs) {
    offsets.push(offset);
    for (let i = 0; i < s.numNew; i++) {
      positions[offset + i] = BigInt(s.numPast + i);
      newSlots[offset + i] = slotOf(s.blockTable, s.numPast + i, blockSize);
    }
    offset += s.numNew;
  }
  const unpadIndex = new BigInt64Array(numTokens);
  const groups = {} as Record<AttentionGroup, GroupTensors>;
  let groupBase = 0;
  for (const group of ATTENTION_GROUPS) {
    const members = seqs.map((s, i) => ({ s, offset: offsets[i]! })).filter(({ s }) => groupOf(s) === group);
    const t = groupTensors(
      members.map((m) => m.s),
      members.map((m) => m.offset),
      blockSize,
      slidingWindow,
    );
    members.forEach(({ s, offset: o }, b) => {
      for (let i = 0; i < s.numNew; i++) unpadIndex[o + i] = BigInt(groupBase + b * t.queries + i);
    });
    groupBase += t.batch * t.queries;
    groups[group] = t;
  }
  const logitsIndex = BigInt64Array.from(
    seqs.flatMap((s, i) => {
      const rows = logitRowCount(s);
      const end = offsets[i]! + s.numNew;
      return Array.from({ length: rows }, (_, j) => BigInt(end - rows + j));
    }),
  );
  const rope = model && ropeDependsOnLength(model) ? tokenRope(seqs, model) : undefined;
  return { positions, groups, unpadIndex, logitsIndex, newSlots, ropeInverseFrequencies: rope };
}

/**
 * Logits rows a sequence takes in a step's result, the last ones of its new tokens in order: every new
 * token's with promptLogits, the last numLogits (a speculative row's k + 1, capped at numNew) with
 * needsLogits, else none. The two never combine: a request asking prompt logprobs is never speculated
 * (EngineCore), and a step asking both is a bug, refused here rather than answered with rows a reader
 * would take for the other kind.
 */
export function logitRowCount(
  s: Pick<SequenceStep, "numNew" | "needsLogits" | "promptLogits" | "numLogits">,
): number {
  if (s.promptLogits) {
    if ((s.numLogits ?? 1) > 1) throw new Error("a step's row asks both prompt logits and speculative rows");
    return s.numNew;
  }
  return s.needsLogits ? Math.min(s.numLogits ?? 1, s.numNew) : 0;
}

/**
 * Dynamic rope's tables, one per token. transformers rescales the base on every forward from that
 * forward's length (its largest position + 1) and keeps cached keys as they were rotated then, so in
 * generate() every prompt token is rotated for the prompt's length L (the one prefill forward) and
 * the token at position p >= L for p + 1 (its decode forward). With a batch it takes the longest
 * sequence's length for all of them. Here each token gets the table of max(L, p + 1): each sequence
 * exactly as transformers at batch size 1, whatever it is batched with, however its prompt is split
 * into chunks, and when it is recomputed after preemption.
 */
function tokenRope(seqs: readonly SequenceStep[], model: StepModel): Float32Array {
  const half = model.headDim / 2;
  const numTokens = seqs.reduce((n, s) => n + s.numNew, 0);
  const out = new Float32Array(numTokens * half);
  const tables = new Map<number, Float32Array>();
  let offset = 0;
  for (const s of seqs) {
    const prompt = s.promptLength ?? s.numPast + s.numNew;
    for (let i = 0; i < s.numNew; i++) {
      const seqLen = Math.max(prompt, s.numPast + i + 1);
      const table = tables.get(seqLen) ?? ropeInverseFrequencies(model, seqLen);
      tables.set(seqLen, table);
      out.set(table, (offset + i) * half);
    }
    offset += s.numNew;
  }
  return out;
}

/**
 * The padded tensors of one attention group. An empty group becomes one dummy row (one query on
 * token 0 with no past) whose output nothing reads: onnxruntime's shape inference then never meets a
 * zero-sized batch.
 */
function groupTensors(
  seqs: readonly SequenceStep[],
  offsets: readonly number[],
  blockSize: number,
  slidingWindow: number | undefined,
): GroupTensors {
  if (seqs.length === 0) {
    return {
      batch: 1,
      queries: 1,
      past: 0,
      numPast: [0],
      queryIndex: BigInt64Array.of(0n),
      pastIndex: new BigInt64Array(0),
      bias: Float32Array.of(0),
    };
  }
  const batch = seqs.length;
  const queries = Math.max(...seqs.map((s) => s.numNew));
  const past = Math.max(...seqs.map((s) => s.numPast));
  const keys = past + queries;
  const queryIndex = new BigInt64Array(batch * queries);
  const pastIndex = new BigInt64Array(batch * past);
  const bias = new Float32Array(batch * queries * keys).fill(Number.NEGATIVE_INFINITY);
  seqs.forEach((s, b) => {
    const first = offsets[b]!;
    for (let i = 0; i < queries; i++) queryIndex[b * queries + i] = BigInt(first + Math.min(i, s.numNew - 1));
    for (let j = 0; j < s.numPast; j++) pastIndex[b * past + j] = BigInt(slotOf(s.blockTable, j, blockSize));
    for (let i = 0; i < queries; i++) {
      const row = bias.subarray((b * queries + i) * keys, (b * queries + i + 1) * keys);
      if (i >= s.numNew) {
        row[past] = 0; // padding query: attend to one real key so the row stays finite; never read
        continue;
      }
      const position = s.numPast + i;
      const lowest = slidingWindow === undefined ? 0 : position - slidingWindow + 1;
      for (let j = Math.max(0, lowest); j < s.numPast; j++) row[j] = 0;
      for (let k = 0; k <= i; k++) if (s.numPast + k >= lowest) row[past + k] = 0;
    }
  });
  return { batch, queries, past, numPast: seqs.map((s) => s.numPast), queryIndex, pastIndex, bias };
}
