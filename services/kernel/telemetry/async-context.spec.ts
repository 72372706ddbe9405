import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import { createContextKey, ROOT_CONTEXT } from "@opentelemetry/api";
import { AsyncContextManager } from "./async-context.ts";

describe("AsyncContextManager", () => {
  const key = createContextKey("request");
  const manager = new AsyncContextManager();
  const current = () => manager.active().getValue(key);

  it("keeps the context of `with` across awaits and timers, and restores the outer one", async () => {
    assert.equal(manager.active(), ROOT_CONTEXT);
    const seen = await manager.with(ROOT_CONTEXT.setValue(key, "a"), async () => {
      await delay(1);
      const inTimer = await new Promise((resolve) => setTimeout(() => resolve(current()), 1));
      return [current(), inTimer];
    });
    assert.deepEqual(seen, ["a", "a"]);
    assert.equal(current(), undefined);
  });

  it("keeps two concurrent requests apart", async () => {
    const run = (value: string) =>
      manager.with(ROOT_CONTEXT.setValue(key, value), async () => {
        await delay(2);
        return current();
      });
    assert.deepEqual(await Promise.all([run("a"), run("b")]), ["a", "b"]);
  });

  it("binds a function to a context; other values pass through", () => {
    const bound = manager.bind(ROOT_CONTEXT.setValue(key, "bound"), () => current());
    assert.equal(bound(), "bound");
    const value = { not: "a function" };
    assert.equal(manager.bind(ROOT_CONTEXT, value), value);
  });
});
