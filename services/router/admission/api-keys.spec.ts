import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { Code, type Result } from "../../kernel/errors.ts";
import { ManualClock } from "../../kernel/manual-clock.ts";
import { ApiKeys, chargeCaller, parseApiKeys } from "./api-keys.ts";

describe("API keys", () => {
  const clock = new ManualClock();
  const keys = new ApiKeys(
    [
      {
        name: "team-a",
        key: "sk-aaaaaaaa",
        requestsPerSecond: 1,
        burstRequests: 2,
        tokensPerSecond: 100,
        burstTokens: 100,
      },
      { name: "unlimited", key: "sk-bbbbbbbb" },
    ],
    clock,
  );

  it("knows its keys and refuses others with UNAUTHENTICATED", () => {
    assert.equal(keys.authenticate("sk-aaaaaaaa").value?.name, "team-a");
    assert.equal(keys.authenticate("sk-aaaaaaab").error?.code, Code.UNAUTHENTICATED);
    assert.equal(keys.authenticate(undefined).error?.code, Code.UNAUTHENTICATED);
    assert.equal(keys.authenticate("short").error?.code, Code.UNAUTHENTICATED);
  });

  it("limits requests and tokens per key, with a retry hint", () => {
    const caller = keys.authenticate("sk-aaaaaaaa").value!;
    assert.equal(chargeCaller(caller, 10).error, undefined);
    const tooManyTokens = chargeCaller(caller, 95).error;
    assert.equal(tooManyTokens?.code, Code.RESOURCE_EXHAUSTED);
    assert.match(tooManyTokens?.message ?? "", /tokens/);
    assert.equal(chargeCaller(caller, 10).error, undefined, "the refused request was not counted");
    const tooManyRequests = chargeCaller(caller, 1).error;
    assert.match(tooManyRequests?.message ?? "", /requests/);
    assert.equal(tooManyRequests?.retryAfterMs, 1_000);
    const unlimited = keys.authenticate("sk-bbbbbbbb").value!;
    for (let i = 0; i < 100; i++) assert.equal(chargeCaller(unlimited, 10_000).error, undefined);
  });

  it("parses the keys file and names a bad entry", () => {
    assert.equal(
      parseApiKeys("keys:\n  - { name: a, key: sk-12345678, tokensPerSecond: 10 }\n").value?.[0]
        ?.tokensPerSecond,
      10,
    );
    assert.match(
      parseApiKeys("keys:\n  - { name: a, key: x }\n").error?.message ?? "",
      /keys\.0\.key: must be at least 8/,
    );
    assert.match(parseApiKeys("keys: []\n").error?.message ?? "", /keys/);
  });

  it("replaces its keys, keeping the buckets of every key whose entry did not change", () => {
    const rotating = new ApiKeys(
      [
        { name: "kept", key: "sk-kept-0001", requestsPerSecond: 1, burstRequests: 1 },
        { name: "old", key: "sk-old-00001" },
      ],
      new ManualClock(),
    );
    const kept = rotating.authenticate("sk-kept-0001").value!;
    assert.equal(chargeCaller(kept, 1).error, undefined);
    rotating.replace([
      { name: "kept", key: "sk-kept-0001", requestsPerSecond: 1, burstRequests: 1 },
      { name: "new", key: "sk-new-00001" },
    ]);
    assert.deepEqual(rotating.names, ["kept", "new"]);
    assert.equal(rotating.authenticate("sk-old-00001").error?.code, Code.UNAUTHENTICATED);
    assert.equal(rotating.authenticate("sk-new-00001").value?.name, "new");
    const same = rotating.authenticate("sk-kept-0001").value!;
    assert.equal(same, kept, "an unchanged key keeps its caller");
    assert.equal(chargeCaller(same, 1).error?.code, Code.RESOURCE_EXHAUSTED, "and its spent bucket");
  });

  it("follows its file: takes a valid new version, keeps the keys in force over an invalid one", async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), "tessera-keys-")), "keys.yaml");
    writeFileSync(file, "keys:\n  - {name: first, key: sk-first-0001}\n");
    const heard: Result<string[]>[] = [];
    const following = ApiKeys.fromFile(file, new ManualClock(), {
      intervalMs: 20,
      onChange: (outcome) => heard.push(outcome),
    });
    try {
      const until = async (n: number) => {
        for (let i = 0; i < 200 && heard.length < n; i++) await delay(10);
      };
      writeFileSync(file, "keys:\n  - {name: second, key: sk-second-001}\n");
      await until(1);
      assert.deepEqual(heard[0]?.value, ["second"]);
      assert.equal(following.authenticate("sk-second-001").value?.name, "second");
      assert.equal(following.authenticate("sk-first-0001").error?.code, Code.UNAUTHENTICATED);
      writeFileSync(file, "keys:\n  - {name: third, key: short}\n");
      await until(2);
      assert.match(heard[1]?.error?.message ?? "", /API keys file: keys\.0\.key/);
      assert.equal(following.authenticate("sk-second-001").value?.name, "second", "still in force");
    } finally {
      following.stop();
    }
  });
});
