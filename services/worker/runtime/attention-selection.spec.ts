// The start-up race's comparison: a backend whose steps hold more memory (ms-gqa) is picked only where
// it is clearly faster than a lean one, since under load the race's timings swing by more than the
// backends differ.
import assert from "node:assert/strict";
import { msGqaAttention } from "../graph/attention-ms-gqa.ts";
import { onnxOpsAttention } from "../graph/attention-onnx-ops.ts";
import { sharedPrefixAttention } from "../graph/attention-shared-prefix.ts";
import { weighedTime } from "./attention-selection.ts";

describe("attention race weighing", () => {
  it("keeps the lean backends' times as measured", () => {
    assert.equal(weighedTime(onnxOpsAttention, 10), 10);
    assert.equal(weighedTime(sharedPrefixAttention, 10), 10);
  });

  it("picks ms-gqa over onnx-ops only when it is more than its handicap faster", () => {
    const lean = weighedTime(onnxOpsAttention, 10);
    assert.ok(weighedTime(msGqaAttention, 9) > lean, "10% faster is not enough");
    assert.ok(weighedTime(msGqaAttention, 8) < lean, "20% faster is");
  });
});
