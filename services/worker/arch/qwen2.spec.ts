// Qwen2's sliding window follows transformers' per-layer choice: only with use_sliding_window, only
// on layers marked sliding_attention (by default from max_window_layers on); a model mixing sliding
// and full layers is refused, naming the field, rather than run with one mask for all.
import assert from "node:assert/strict";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { qwen2 } from "./qwen2.ts";

const config = (fields: Record<string, unknown>) =>
  qwen2.parseConfig({
    model_type: "qwen2",
    hidden_size: 96,
    num_hidden_layers: 2,
    num_attention_heads: 6,
    num_key_value_heads: 2,
    intermediate_size: 256,
    vocab_size: 512,
    max_position_embeddings: 512,
    sliding_window: 16,
    ...fields,
  });

describe("Qwen2 sliding window", () => {
  it("slides nowhere without use_sliding_window, or when no layer reaches max_window_layers", () => {
    assert.equal(config({}).value?.slidingWindow, undefined);
    assert.equal(config({ use_sliding_window: true }).value?.slidingWindow, undefined); // default 28 > 2 layers
    assert.equal(config({ use_sliding_window: true, max_window_layers: 2 }).value?.slidingWindow, undefined);
  });

  it("slides when every layer is a sliding one", () => {
    assert.equal(config({ use_sliding_window: true, max_window_layers: 0 }).value?.slidingWindow, 16);
    const types = { layer_types: ["sliding_attention", "sliding_attention"] };
    assert.equal(config({ use_sliding_window: true, ...types }).value?.slidingWindow, 16);
  });

  it("refuses sliding and full layers mixed, naming the field that mixes them", () => {
    const mixed = config({ use_sliding_window: true, max_window_layers: 1 }).error;
    assert.ok(mixed instanceof TesseraError && mixed.code === Code.INVALID_ARGUMENT);
    assert.match(mixed.message, /config\.json max_window_layers.*1 of 2 layers/);
    const types = { layer_types: ["full_attention", "sliding_attention"] };
    assert.match(
      config({ use_sliding_window: true, ...types }).error?.message ?? "",
      /config\.json layer_types/,
    );
  });
});
