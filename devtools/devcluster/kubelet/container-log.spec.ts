import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ManualClock } from "../../../services/kernel/manual-clock.ts";
import { ContainerLog, logTimestamp } from "./container-log.ts";

describe("container-log", () => {
  it("splits output into lines per stream and keeps partial lines until their newline", () => {
    const clock = new ManualClock();
    const log = new ContainerLog({ clock, maxLines: 100 });
    log.write("stdout", "hel");
    log.write("stderr", "oops\n");
    log.write("stdout", Buffer.from("lo\nworld"));
    assert.equal(log.read(), "oops\nhello\n");
    log.close();
    assert.equal(log.read(), "oops\nhello\nworld\n");
  });

  it("reads with timestamps, tail, since and a byte limit", async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 1));
    const log = new ContainerLog({ clock, maxLines: 100 });
    log.write("stdout", "one\n");
    await clock.advance(5_000);
    log.write("stdout", "two\nthree\n");
    assert.equal(log.read({ tailLines: 2 }), "two\nthree\n");
    assert.equal(log.read({ sinceTime: Date.UTC(2025, 0, 1, 0, 0, 1) }), "two\nthree\n");
    assert.equal(log.read({ tailLines: 1, timestamps: true }), "2025-01-01T00:00:05.000000000Z three\n");
    assert.equal(log.read({ limitBytes: 6 }), "one\ntw");
    assert.equal(logTimestamp(0), "1970-01-01T00:00:00.000000000Z");
  });

  it("keeps only the newest lines in memory and every line in its file", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-log-"));
    const file = path.join(dir, "c", "0.log");
    const log = new ContainerLog({ clock: new ManualClock(0), maxLines: 2, file });
    log.write("stdout", "a\nb\nc\n");
    log.close();
    assert.equal(log.read(), "b\nc\n");
    await log.flushed();
    assert.equal(
      readFileSync(file, "utf8"),
      ["a", "b", "c"].map((l) => `1970-01-01T00:00:00.000000000Z stdout F ${l}\n`).join(""),
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it("follows new lines until the instance ends", async () => {
    const log = new ContainerLog({ clock: new ManualClock(), maxLines: 100 });
    log.write("stdout", "first\n");
    const chunks: string[] = [];
    const done = (async () => {
      for await (const chunk of log.follow({}, new AbortController().signal)) chunks.push(chunk);
    })();
    await new Promise((resolve) => setImmediate(resolve));
    log.write("stdout", "second\n");
    await new Promise((resolve) => setImmediate(resolve));
    log.write("stdout", "third");
    log.close();
    await done;
    assert.equal(chunks.join(""), "first\nsecond\nthird\n");
  });

  it("stops following when the reader goes away", async () => {
    const log = new ContainerLog({ clock: new ManualClock(), maxLines: 100 });
    const abort = new AbortController();
    const done = (async () => {
      const chunks: string[] = [];
      for await (const chunk of log.follow({}, abort.signal)) chunks.push(chunk);
      return chunks;
    })();
    await new Promise((resolve) => setImmediate(resolve));
    abort.abort();
    assert.deepEqual(await done, []);
  });
});
