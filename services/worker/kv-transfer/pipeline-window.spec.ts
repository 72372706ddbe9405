import assert from "node:assert/strict";
import { pipelined } from "./pipeline-window.ts";

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("pipelined", () => {
  it("keeps at most `depth` batches in flight and handles replies in order", async () => {
    const replies = [0, 1, 2, 3].map(() => deferred<string>());
    const sent: number[] = [];
    const received: string[] = [];
    const done = pipelined(
      [0, 1, 2, 3],
      2,
      new AbortController().signal,
      (batch) => {
        sent.push(batch);
        return replies[batch]!.promise;
      },
      (batch, reply) => received.push(`${batch}:${reply}`),
    );
    assert.deepEqual(sent, [0, 1]);
    replies[1]!.resolve("b");
    replies[0]!.resolve("a");
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(sent, [0, 1, 2, 3]);
    replies[3]!.resolve("d");
    replies[2]!.resolve("c");
    await done;
    assert.deepEqual(received, ["0:a", "1:b", "2:c", "3:d"]);
  });

  it("stops sending at the first failure, leaving no unhandled rejection behind", async () => {
    const sent: number[] = [];
    const failing = pipelined(
      [0, 1, 2, 3],
      2,
      new AbortController().signal,
      (batch) => {
        sent.push(batch);
        return Promise.reject(new Error(`batch ${batch} failed`));
      },
      () => {},
    );
    await assert.rejects(failing, /batch 0 failed/);
    assert.deepEqual(sent, [0, 1]);
  });

  it("stops sending once aborted", async () => {
    const abort = new AbortController();
    const sent: number[] = [];
    const run = pipelined(
      [0, 1, 2],
      1,
      abort.signal,
      async (batch) => {
        sent.push(batch);
        abort.abort(new Error("deadline"));
      },
      () => {},
    );
    await assert.rejects(run, /deadline/);
    assert.deepEqual(sent, [0]);
  });
});
