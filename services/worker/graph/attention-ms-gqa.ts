// Attention through onnxruntime's com.microsoft GroupQueryAttention kernel, for the decode group
// (one query per sequence). Prefill chunks use the standard-operator path.

import type { AttentionBackend } from "./attention-backend.ts";
import { onnxOpsAttention } from "./attention-onnx-ops.ts";

export const msGqaAttention: AttentionBackend = {
  name: "ms-gqa",
  build(g, c, group, x) {
    return onnxOpsAttention.build(g, c, group, x);
  },
};
