import assert from "node:assert/strict";
import { ShardStats } from "./shard-stats.ts";

describe("ShardStats", () => {
  it("adds in one view of the shared buffer and reads in another", () => {
    const writer = new ShardStats();
    const reader = new ShardStats(writer.buffer);
    writer.sent("reduce", 1024);
    writer.sent("reduce", 1024);
    writer.sent("hello", 50);
    writer.add("run_seconds", 0.25);
    const read = reader.read();
    assert.equal(read.sent_bytes_reduce, 2048);
    assert.equal(read.run_seconds, 0.25);
    assert.equal(read.steps, 0);
  });
});
