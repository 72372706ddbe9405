// Decode attention that reads a prompt head shared by several sequences once (cascade attention, as
// FlashInfer's shared-prefix kernels): the decode rows whose block tables start with the same full
// blocks form a share group, and the group's queries attend to those blocks in one matmul against
// one copy of their K/V; each row attends to the rest of its own past (its tail) and its new token
// as before. The two partial softmaxes merge exactly by their maxima and sums (log-sum-exp):
//   out = (o_s e^(m_s - m) + o_t e^(m_t - m)) / (l_s e^(m_s - m) + l_t e^(m_t - m)), m = max(m_s, m_t).
// On the bench batch's decode steps (32 rows, ~180 cached tokens, ~120 of them a head shared by 8),
// gathering every row's own copy of its past was most of a step: a row with 40 cached tokens cost
// ~0.4x one with 180. Prefill chunks keep the standard-operator path (onnx-ops).
import type { AttentionBackend } from "./attention-backend.ts";
import { onnxOpsAttention } from "./attention-onnx-ops.ts";
import { pastProducts } from "./attention-past-halves.ts";

/** Slots of each share group's common blocks [groups, length], padded with slot 0. */
export const SHARED_INDEX = "decode_shared_index";
/** 0 over a group's shared tokens, -inf over its padding [groups, 1, 1, length]. */
export const SHARED_BIAS = "decode_shared_bias";
/** The decode rows of each group [groups, members], padded with row 0 (whose padded output nobody reads). */
export const SHARED_MEMBERS = "decode_shared_members";
/** Each decode row's place in the groups' flattened members (group * members + i), or groups * members for none [batch]. */
export const SHARED_ROWS = "decode_shared_rows";

export const sharedPrefixAttention: AttentionBackend = {
  name: "shared-prefix",
  build(g, c, group, x) {
    if (group !== "decode") return onnxOpsAttention.build(g, c, group, x);
    const { numHeads: H, numKvHeads: KV, headDim: D } = c;
    const G = H / KV;
    const scale = g.scalar(1 / Math.sqrt(D));
    const index = g.input(SHARED_INDEX, "int64", ["shared_groups", "shared_length"]);
    const bias = g.input(SHARED_BIAS, "float", ["shared_groups", 1, 1, "shared_length"]);
    const members = g.input(SHARED_MEMBERS, "int64", ["shared_groups", "shared_members"]);
    const rows = g.input(SHARED_ROWS, "int64", ["decode_batch"]);
    /** A softmax left unnormalized: the max over the last axis, exp of the scores less it, their sum. */
    const partial = (scores: string) => {
      const m = g.op("ReduceMax", [scores], { axes: [-1], keepdims: 1 });
      const p = g.op("Exp", [g.op("Sub", [scores, m])]);
      const l = g.op("ReduceSum", [p, g.ints([-1])], { keepdims: 1 });
      return { m, l, p };
    };

    // The tail: each row's own past after its group's blocks, and its new token. [B,H,*]
    // As onnx-ops does, the row's gathered past is scored apart from its new key and the scores are
    // joined (they are small), and the context sums the two products: joining the gathered K and V to
    // the new token's copied each whole, per layer and step (26 MiB a copy on the base preset at 64
    // rows of 415 tokens).
    const headMajor = (t: string) => g.op("Transpose", [t], { perm: [0, 2, 1, 3] }); // [B,KV,1,D]
    const transposed = (t: string) => g.op("Transpose", [t], { perm: [0, 1, 3, 2] }); // [.., D, T]
    const newKeys = headMajor(x.newKey);
    const newValues = headMajor(x.newValue);
    // Scaled before the products: neither the tail's scores nor the shared ones need it then.
    const qRows = g.op("Reshape", [g.op("Mul", [x.query, scale]), g.ints([-1, H, D])]); // [B,H,D]
    const qGrouped = g.op("Reshape", [qRows, g.ints([0, KV, G, D])]); // [B,KV,G,D]
    const products = pastProducts(g, c, group, x); // the past gathered in halves of the rows
    const tailScores = products.scores(qGrouped, transposed, newKeys); // [B,KV,G,T]
    const perHead = g.op("Reshape", [tailScores, g.ints([0, H, 1, -1])]); // [B,H,1,T]
    const tail = partial(g.op("Add", [perHead, x.bias]));
    const tailProbs = g.op("Reshape", [tail.p, g.ints([0, KV, G, -1])]); // [B,KV,G,T]
    const tailOut = g.op("Reshape", [products.context(tailProbs, newValues), g.ints([0, H, D])]); // [B,H,D]
    const tailMax = g.op("Reshape", [tail.m, g.ints([0, H, 1])]);
    const tailSum = g.op("Reshape", [tail.l, g.ints([0, H, 1])]);

    // The shared blocks: each group's queries against one copy of its K/V. [groups,KV,members*G,*]
    const gather = (src: string) => g.op("Gather", [src, index], { axis: 0 }); // [Gs,Ps,KV,D]
    const sharedKT = g.op("Transpose", [gather(x.keyCache)], { perm: [0, 2, 3, 1] }); // [Gs,KV,D,Ps]
    const sharedV = g.op("Transpose", [gather(x.valueCache)], { perm: [0, 2, 1, 3] }); // [Gs,KV,Ps,D]
    const q5 = g.op("Reshape", [g.op("Gather", [qRows, members], { axis: 0 }), g.ints([0, 0, KV, G, D])]);
    const qShared = g.op("Reshape", [
      g.op("Transpose", [q5], { perm: [0, 2, 1, 3, 4] }),
      g.ints([0, 0, -1, D]),
    ]);
    const sharedScores = g.op("Add", [g.op("MatMul", [qShared, sharedKT]), bias]);
    const shared = partial(sharedScores);
    const sharedOut = g.op("MatMul", [shared.p, sharedV]); // [Gs,KV,M*G,D]
    // To rows [Gs*M (+1 for rows in no group), H, last] and each decode row's own.
    const perRow = (t: string, last: number, none: number) => {
      const five = g.op("Reshape", [t, g.ints([0, 0, -1, G, last])]); // [Gs,KV,M,G,last]
      const flat = g.op("Reshape", [
        g.op("Transpose", [five], { perm: [0, 2, 1, 3, 4] }),
        g.ints([-1, H, last]),
      ]);
      const padded = g.op("Concat", [flat, g.filled(none, [1, H, last])], { axis: 0 });
      return g.op("Gather", [padded, rows], { axis: 0 }); // [B,H,last]
    };
    // A row in no group: no shared keys, weight e^(-inf) = 0 against its tail.
    const rowOut = perRow(sharedOut, D, 0);
    const rowMax = perRow(shared.m, 1, Number.NEGATIVE_INFINITY);
    const rowSum = perRow(shared.l, 1, 0);

    const m = g.op("Max", [rowMax, tailMax]);
    const a = g.op("Exp", [g.op("Sub", [rowMax, m])]);
    const b = g.op("Exp", [g.op("Sub", [tailMax, m])]);
    const numerator = g.op("Add", [g.op("Mul", [rowOut, a]), g.op("Mul", [tailOut, b])]);
    const denominator = g.op("Add", [g.op("Mul", [rowSum, a]), g.op("Mul", [tailSum, b])]);
    return g.op("Reshape", [g.op("Div", [numerator, denominator]), g.ints([-1, H * D])]);
  },
};
