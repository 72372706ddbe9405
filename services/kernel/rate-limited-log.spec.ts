import assert from "node:assert/strict";
import type { Logger } from "./log.ts";
import { RateLimitedLog } from "./rate-limited-log.ts";

function recorder() {
  const lines: { fields: Record<string, unknown>; msg: string }[] = [];
  const log = { warn: (fields: Record<string, unknown>, msg: string) => lines.push({ fields, msg }) };
  return { lines, log: log as unknown as Logger };
}

describe("RateLimitedLog", () => {
  it("writes the first warning of a kind, then one per interval with the count left out", () => {
    const { lines, log } = recorder();
    let now = 0;
    const limited = new RateLimitedLog(log, 10_000, () => now);
    for (let i = 0; i < 579; i++) {
      limited.warn("fallback", { reason: "unavailable" }, "remote KV fallback");
      now += 10; // 579 requests over 5.8 s
    }
    assert.deepEqual(lines, [{ fields: { reason: "unavailable" }, msg: "remote KV fallback" }]);
    now = 10_000;
    limited.warn("fallback", { reason: "unavailable" }, "remote KV fallback");
    assert.deepEqual(lines.at(-1), {
      fields: { reason: "unavailable", suppressed: 578 },
      msg: "remote KV fallback",
    });
    now = 25_000;
    limited.warn("fallback", { reason: "unavailable" }, "remote KV fallback");
    assert.deepEqual(lines.at(-1)?.fields, { reason: "unavailable" }, "nothing left out in between");
  });

  it("limits each kind on its own", () => {
    const { lines, log } = recorder();
    const limited = new RateLimitedLog(log, 10_000, () => 0);
    limited.warn("a", {}, "first a");
    limited.warn("b", {}, "first b");
    limited.warn("a", {}, "second a");
    assert.deepEqual(
      lines.map((l) => l.msg),
      ["first a", "first b"],
    );
  });
});
