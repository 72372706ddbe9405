import assert from "node:assert/strict";
import path from "node:path";
import { FinishReason } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { greedySampling } from "../../inference/sampling-params.ts";
import { StopStringMatcher } from "../../inference/stop-strings.ts";
import type { SamplingParams } from "../../inference/types.ts";
import { Tokenizer } from "../../tokenizer/tokenizer.ts";
import { Detokenizer } from "./detokenizer.ts";

const tokenizer = Tokenizer.fromFile(
  path.resolve(import.meta.dirname, "../../worker/testdata/hf-reference/tiny-llama"),
);
const EOS = 2;
const sampling = (fields: Partial<SamplingParams> = {}): SamplingParams => greedySampling(fields);

function run(ids: number[], params: SamplingParams, reason: FinishReason): string {
  const detokenizer = new Detokenizer(tokenizer, params, [EOS]);
  return ids.map((id) => detokenizer.push(id)).join("") + detokenizer.finish(reason);
}

describe("Detokenizer", () => {
  const text = "Hello wörld, 日本語 text!";
  const ids = tokenizer.encode(text);

  it("streams the same text as decoding all ids at once", () => {
    assert.equal(run(ids, sampling(), FinishReason.LENGTH), tokenizer.decode(ids));
  });

  it("adds no text for an eos or stop token id, unless eos is ignored", () => {
    assert.equal(run([...ids, EOS], sampling(), FinishReason.STOP), text);
    assert.equal(run([...ids, 7], sampling({ stopTokenIds: [7] }), FinishReason.STOP), text);
    assert.equal(
      run([...ids, EOS], sampling({ ignoreEos: true }), FinishReason.LENGTH),
      tokenizer.decode([...ids, EOS]),
    );
  });

  it("leaves special tokens out of the text with skip_special_tokens, as decode does", () => {
    const withBos = [1, ...ids, EOS];
    const skipping = new Detokenizer(tokenizer, sampling({ ignoreEos: true }), [EOS], {
      skipSpecialTokens: true,
    });
    const skipped = withBos.map((id) => skipping.push(id)).join("") + skipping.finish(FinishReason.LENGTH);
    assert.equal(skipped, tokenizer.decode(withBos, { skipSpecialTokens: true }));
    assert.equal(skipped, text);
    assert.notEqual(
      run(withBos, sampling({ ignoreEos: true }), FinishReason.LENGTH),
      text,
      "kept by default",
    );
  });

  it("cuts the text before a stop string and drops it", () => {
    assert.equal(run(ids, sampling({ stop: ["wörld"] }), FinishReason.STOP_STRING), "Hello ");
  });

  it("hands out text without stop strings as the stop-string matcher would, emoji included", () => {
    const emoji = tokenizer.encode("Smile 🙂, then 日本 and 😀😀 again", { addSpecialTokens: false });
    const detokenizer = new Detokenizer(tokenizer, sampling(), [EOS]);
    const stream = tokenizer.textStream();
    const matcher = new StopStringMatcher([]);
    for (const id of emoji) assert.equal(detokenizer.push(id), matcher.push(stream.push(id)).text);
    assert.equal(detokenizer.finish(FinishReason.LENGTH), matcher.flush(stream.flush()));
  });
});
