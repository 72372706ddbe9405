import assert from "node:assert/strict";
import { podLogRequest } from "./pod-logs.ts";

describe("pod-logs", () => {
  it("reads the log query parameters kubectl sends", () => {
    const signal = new AbortController().signal;
    const request = podLogRequest(
      "ns",
      "p",
      new URLSearchParams("container=c&follow=true&tailLines=10&timestamps=true"),
      signal,
    );
    assert.deepEqual(
      { ...request, signal: undefined },
      {
        namespace: "ns",
        name: "p",
        container: "c",
        follow: true,
        previous: false,
        timestamps: true,
        tailLines: 10,
        signal: undefined,
      },
    );
  });
});
