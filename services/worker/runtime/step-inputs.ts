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
  /** Cached tokens of each sequence (0 for padding rows); of the one row, all of them, when packed. */
  numPast: number[];
  /** Where each sequence's first query sits in the group's [batch * queries] (b * queries unless packed). */
  queryStart: number[];
  queryIndex: BigInt64Array;
  pastIndex: BigInt64Array;
  bias: Float32Array;
}

/**
 * The decode rows' shared prompt heads, for the shared-prefix attention backend: rows whose block tables
 * start with the same full blocks form a group that attends to those blocks once; the decode group's
 * past then holds each row's tail only (its cached tokens after its group's blocks).
 */
export interface SharedPrefixTensors {
  groups: number;
  /** Rows of the largest group. */
  members: number;
  /** Shared tokens of the longest group. */
  length: number;
  /** [groups, length] pool slots of each group's shared tokens (padding: slot 0). */
  index: BigInt64Array;
  /** [groups, length] 0 over each group's shared tokens, -inf over its padding. */
  bias: Float32Array;
  /** [groups, members] the decode rows of each group (padding: row 0). */
  memberIndex: BigInt64Array;
  /** [decode batch] each row's place in the flattened members, or groups * members for a row in none. */
  rowIndex: BigInt64Array;
}

export interface StepInputs {
  positions: BigInt64Array;
  groups: Record<AttentionGroup, GroupTensors>;
  /** Set when built for the shared-prefix backend. */
  shared?: SharedPrefixTensors;
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
  sharedPrefix = false,
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
  let shared: SharedPrefixTensors | undefined;
  for (const group of ATTENTION_GROUPS) {
    const members = seqs.map((s, i) => ({ s, offset: offsets[i]! })).filter(({ s }) => groupOf(s) === group);
    const rows = members.map((m) => m.s);
    // A sliding window masks old tokens per row: shared blocks would need a mask per row, so none.
    let skip: number[] | undefined;
    if (group === "decode" && sharedPrefix) {
      const share = shareGroups(rows, blockSize, slidingWindow === undefined);
      shared = share.tensors;
      skip = share.skip;
    }
    const offsetsOf = members.map((m) => m.offset);
    const t =
      group === "prefill" && packs(rows)
        ? packedGroupTensors(rows, offsetsOf, blockSize, slidingWindow)
        : groupTensors(rows, offsetsOf, blockSize, slidingWindow, skip);
    members.forEach(({ s, offset: o }, b) => {
      for (let i = 0; i < s.numNew; i++) unpadIndex[o + i] = BigInt(groupBase + t.queryStart[b]! + i);
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
  return {
    positions,
    groups,
    unpadIndex,
    logitsIndex,
    newSlots,
    ropeInverseFrequencies: rope,
    ...(shared && { shared }),
  };
}

/**
 * Share groups of decode rows: rows whose tables start with the same block, at least two of them, share
 * their tables' common leading blocks that are full for every member (a shared block is a cached one,
 * read-only). Each row's skip is the tokens its group covers (0 in none). With `share` false (a sliding
 * window) every row is in none. No group at all still gives
 * one padding group (one row-0 query, one masked key) whose output no row reads: onnxruntime's shape
 * inference then never meets a zero-sized tensor.
 */
export function shareGroups(
  rows: readonly SequenceStep[],
  blockSize: number,
  share = true,
): { tensors: SharedPrefixTensors; skip: number[] } {
  const byFirst = new Map<number, number[]>();
  rows.forEach((s, b) => {
    if (!share || s.numPast < blockSize) return;
    const first = s.blockTable[0]!;
    const list = byFirst.get(first);
    if (list) list.push(b);
    else byFirst.set(first, [b]);
  });
  const found: { rows: number[]; blocks: number }[] = [];
  for (const list of byFirst.values()) {
    if (list.length < 2) continue;
    const tables = list.map((b) => rows[b]!.blockTable);
    let blocks = Math.min(...list.map((b) => Math.floor(rows[b]!.numPast / blockSize)));
    for (let i = 1; i < blocks; i++) {
      const id = tables[0]![i];
      if (tables.some((t) => t[i] !== id)) blocks = i;
    }
    found.push({ rows: list, blocks });
  }
  const skip = rows.map(() => 0);
  if (found.length === 0) {
    return {
      tensors: {
        groups: 1,
        members: 1,
        length: 1,
        index: BigInt64Array.of(0n),
        bias: Float32Array.of(Number.NEGATIVE_INFINITY),
        memberIndex: BigInt64Array.of(0n),
        rowIndex: new BigInt64Array(Math.max(1, rows.length)).fill(1n), // an empty group's padding row too
      },
      skip,
    };
  }
  const members = Math.max(...found.map((f) => f.rows.length));
  const length = Math.max(...found.map((f) => f.blocks)) * blockSize;
  const index = new BigInt64Array(found.length * length);
  const bias = new Float32Array(found.length * length).fill(Number.NEGATIVE_INFINITY);
  const memberIndex = new BigInt64Array(found.length * members);
  const rowIndex = new BigInt64Array(rows.length).fill(BigInt(found.length * members));
  found.forEach((f, gi) => {
    const table = rows[f.rows[0]!]!.blockTable;
    for (let j = 0; j < f.blocks * blockSize; j++) {
      index[gi * length + j] = BigInt(slotOf(table, j, blockSize));
      bias[gi * length + j] = 0;
    }
    f.rows.forEach((b, i) => {
      memberIndex[gi * members + i] = BigInt(b);
      rowIndex[b] = BigInt(gi * members + i);
      skip[b] = f.blocks * blockSize;
    });
  });
  return { tensors: { groups: found.length, members, length, index, bias, memberIndex, rowIndex }, skip };
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
  skip?: readonly number[],
): GroupTensors {
  if (seqs.length === 0) {
    return {
      batch: 1,
      queries: 1,
      past: 0,
      numPast: [0],
      queryStart: [0],
      queryIndex: BigInt64Array.of(0n),
      pastIndex: new BigInt64Array(0),
      bias: Float32Array.of(0),
    };
  }
  const batch = seqs.length;
  const queries = Math.max(...seqs.map((s) => s.numNew));
  // With shared prefixes (decode rows only, no sliding window), a row's past here starts after its group's blocks.
  const from = (b: number) => skip?.[b] ?? 0;
  const past = Math.max(...seqs.map((s, b) => s.numPast - from(b)));
  const keys = past + queries;
  const queryIndex = new BigInt64Array(batch * queries);
  const pastIndex = new BigInt64Array(batch * past);
  const bias = new Float32Array(batch * queries * keys).fill(Number.NEGATIVE_INFINITY);
  seqs.forEach((s, b) => {
    const first = offsets[b]!;
    for (let i = 0; i < queries; i++) queryIndex[b * queries + i] = BigInt(first + Math.min(i, s.numNew - 1));
    const start = from(b);
    for (let j = start; j < s.numPast; j++)
      pastIndex[b * past + j - start] = BigInt(slotOf(s.blockTable, j, blockSize));
    for (let i = 0; i < queries; i++) {
      const row = bias.subarray((b * queries + i) * keys, (b * queries + i + 1) * keys);
      if (i >= s.numNew) {
        row[past] = 0; // padding query: attend to one real key so the row stays finite; never read
        continue;
      }
      openKeys(row, s, i, slidingWindow, { pastAt: 0, newAt: past, start });
    }
  });
  const numPast = seqs.map((s, b) => s.numPast - from(b));
  const queryStart = seqs.map((_, b) => b * queries);
  return { batch, queries, past, numPast, queryStart, queryIndex, pastIndex, bias };
}

/**
 * Opens in a bias row the keys query `i` of `s` may see, causal and within the sliding window if any:
 * its cached tokens from `start` on, cached token j at column pastAt + j - start, and its new tokens
 * up to itself, new token k at column newAt + k. The padded and the packed layouts differ only in
 * where those columns sit.
 */
function openKeys(
  row: Float32Array,
  s: SequenceStep,
  i: number,
  slidingWindow: number | undefined,
  at: { pastAt: number; newAt: number; start: number },
): void {
  const lowest = slidingWindow === undefined ? 0 : s.numPast + i - slidingWindow + 1;
  for (let j = Math.max(at.start, lowest); j < s.numPast; j++) row[at.pastAt + j - at.start] = 0;
  for (let k = 0; k <= i; k++) if (s.numPast + k >= lowest) row[at.newAt + k] = 0;
}

/**
 * Whether prefill chunks are better packed into one row than padded to the longest (issue 18). Padded,
 * the attention scores are rows x longest chunk x (longest past + longest chunk): one 204-token chunk
 * beside a 30-token chunk with 225 cached tokens pads both to 204 queries over 429 keys. Packed, they
 * are all chunks' tokens over all their pasts and tokens, a chunk's queries masked to its own: never
 * more than the step's token budget of rows. The scores' size sets onnxruntime's arena (it keeps the
 * largest step's regions), and the work goes with it; the smaller layout is taken.
 */
function packs(seqs: readonly SequenceStep[]): boolean {
  if (seqs.length < 2) return false;
  const queries = seqs.reduce((n, s) => n + s.numNew, 0);
  const past = seqs.reduce((n, s) => n + s.numPast, 0);
  const longest = Math.max(...seqs.map((s) => s.numNew));
  const padded = seqs.length * longest * (Math.max(...seqs.map((s) => s.numPast)) + longest);
  return queries * (past + queries) < padded;
}

/**
 * A group of one row holding every sequence's queries one after the other, over every sequence's past
 * (one after the other) and then every new token; the bias lets a query see its own sequence's past and
 * its own sequence's new tokens up to itself (causal, sliding window), as the padded layout does.
 */
function packedGroupTensors(
  seqs: readonly SequenceStep[],
  offsets: readonly number[],
  blockSize: number,
  slidingWindow: number | undefined,
): GroupTensors {
  const queries = seqs.reduce((n, s) => n + s.numNew, 0);
  const past = seqs.reduce((n, s) => n + s.numPast, 0);
  const keys = past + queries;
  const queryIndex = new BigInt64Array(queries);
  const pastIndex = new BigInt64Array(past);
  const bias = new Float32Array(queries * keys).fill(Number.NEGATIVE_INFINITY);
  const queryStart: number[] = [];
  let q0 = 0;
  let p0 = 0;
  seqs.forEach((s, b) => {
    queryStart.push(q0);
    for (let j = 0; j < s.numPast; j++) pastIndex[p0 + j] = BigInt(slotOf(s.blockTable, j, blockSize));
    for (let i = 0; i < s.numNew; i++) {
      queryIndex[q0 + i] = BigInt(offsets[b]! + i);
      const row = bias.subarray((q0 + i) * keys, (q0 + i + 1) * keys);
      openKeys(row, s, i, slidingWindow, { pastAt: p0, newAt: past + q0, start: 0 });
    }
    q0 += s.numNew;
    p0 += s.numPast;
  });
  return { batch: 1, queries, past, numPast: [past], queryStart, queryIndex, pastIndex, bias };
}
