import assert from "node:assert/strict";
import { progressView } from "./batch-progress.ts";

function fakeStream(isTTY: boolean) {
  const written: string[] = [];
  const stream = { isTTY, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

const progress = { done: 40, succeeded: 38, failed: 2, resumed: 10, completionTokens: 300 };

describe("batch progress", () => {
  it("logs done/total, failures, tokens/s and an ETA when stderr is not a terminal", () => {
    const { stream, written } = fakeStream(false);
    const view = progressView(100, stream, 0);
    view.update(progress);
    assert.match(written[0] ?? "", /^batch: 40\/100 requests \(2 failed\), \d+ tok\/s, ETA \d+ s\n$/);
  });

  it("logs at most once per interval", () => {
    const { stream, written } = fakeStream(false);
    const view = progressView(100, stream, 60_000);
    view.update(progress);
    view.update({ ...progress, done: 41 });
    assert.equal(written.length, 1);
  });

  it("ends with a summary that says an interrupted run resumes", () => {
    const { stream, written } = fakeStream(false);
    progressView(100, stream).finish({ ...progress, interrupted: true });
    assert.match(
      written.at(-1) ?? "",
      /^interrupted: 40\/100 requests \(38 ok, 2 failed, 10 from the previous run\), 300 tokens generated .*; run it again to resume\n$/,
    );
  });
});
