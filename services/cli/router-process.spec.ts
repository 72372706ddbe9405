import assert from "node:assert/strict";
import { ROUTER_SEMI_SPACE_FLAGS, routerNodeFlags, SINGLE_THREADED_GC_FLAG } from "./router-process.ts";

describe("routerNodeFlags", () => {
  it("holds the young generation at one size, and on one CPU collects garbage without helper threads", () => {
    assert.deepEqual(routerNodeFlags(["--enable-source-maps"], undefined, 4), [
      "--enable-source-maps",
      ...ROUTER_SEMI_SPACE_FLAGS,
    ]);
    assert.deepEqual(routerNodeFlags([], undefined, 1), [
      ...ROUTER_SEMI_SPACE_FLAGS,
      SINGLE_THREADED_GC_FLAG,
    ]);
  });

  it("keeps what the caller chose on the command line or in NODE_OPTIONS", () => {
    assert.equal(routerNodeFlags(["--max-semi-space-size=32"], undefined, 4), undefined);
    assert.deepEqual(routerNodeFlags(["--max-semi-space-size=32"], undefined, 1), [
      "--max-semi-space-size=32",
      SINGLE_THREADED_GC_FLAG,
    ]);
    assert.deepEqual(routerNodeFlags([], "--parallel-scavenge", 1), [...ROUTER_SEMI_SPACE_FLAGS]);
    assert.equal(routerNodeFlags([], "--max_semi_space_size=4 --no-single-threaded-gc", 1), undefined);
    assert.equal(routerNodeFlags(["--min-semi-space-size=1"], undefined, 4), undefined);
  });

  it("asks for nothing once the flags are there, so the re-executed router goes on", () => {
    const once = routerNodeFlags([], undefined, 1)!;
    assert.equal(routerNodeFlags(once, undefined, 1), undefined);
  });
});
