import assert from "node:assert/strict";
import * as ort from "onnxruntime-node";
import { GraphBuilder } from "./onnx-builder.ts";

describe("GraphBuilder", () => {
  it("builds a model onnxruntime runs: y = softmax(x @ W + b)", async () => {
    const g = new GraphBuilder();
    const x = g.input("x", "float", ["n", 2]);
    const w = g.weight("w", Float32Array.of(1, 2, 3, 4), [2, 2]);
    const b = g.weight("b", Float32Array.of(0.5, -0.5), [2]);
    const y = g.op("Softmax", [g.op("Add", [g.op("MatMul", [x, w]), b])], { axis: -1 });
    g.output(y, "y", "float", ["n", 2]);
    const session = await ort.InferenceSession.create(g.toBytes("test"));
    const out = await session.run({ x: new ort.Tensor("float32", Float32Array.of(1, 1), [1, 2]) });
    const got = out["y"]!.data as Float32Array;
    // logits 4.5 and 5.5 -> softmax [1/(1+e), e/(1+e)]
    assert.ok(Math.abs(got[0]! - 1 / (1 + Math.E)) < 1e-6);
    assert.ok(Math.abs(got[1]! - Math.E / (1 + Math.E)) < 1e-6);
    await session.release();
  });

  it("writes int, ints and float attributes and int64 constants", async () => {
    const g = new GraphBuilder();
    const x = g.input("x", "float", [2, 3]);
    const t = g.op("Transpose", [x], { perm: [1, 0] });
    const r = g.op("Reshape", [t, g.ints([6])]);
    const e = g.op("Elu", [r], { alpha: { float: 2 } });
    g.output(e, "y", "float", [6]);
    const session = await ort.InferenceSession.create(g.toBytes("attrs"));
    const out = await session.run({
      x: new ort.Tensor("float32", Float32Array.of(0, 1, 2, 3, 4, -50), [2, 3]),
    });
    const got = Array.from(out["y"]!.data as Float32Array);
    assert.deepEqual(got.slice(0, 5), [0, 3, 1, 4, 2]);
    assert.ok(Math.abs(got[5]! + 2) < 1e-6);
    await session.release();
  });
});
