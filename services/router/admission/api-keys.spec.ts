import assert from "node:assert/strict";
import { Code } from "../../common/errors.ts";
import { ManualClock } from "../testing/manual-clock.ts";
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
});
