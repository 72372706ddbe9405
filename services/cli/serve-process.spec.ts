import assert from "node:assert/strict";
import {
  MALLOC_TUNABLES,
  SERVE_SEMI_SPACE_FLAGS,
  withMallocTunables,
  withSemiSpace,
} from "./serve-process.ts";

describe("withMallocTunables", () => {
  it("adds both malloc thresholds when none are set", () => {
    assert.equal(withMallocTunables(undefined), MALLOC_TUNABLES.join(":"));
    assert.equal(withMallocTunables(""), MALLOC_TUNABLES.join(":"));
  });

  it("keeps the caller's other tunables and adds ours after them", () => {
    assert.equal(
      withMallocTunables("glibc.malloc.arena_max=2"),
      ["glibc.malloc.arena_max=2", ...MALLOC_TUNABLES].join(":"),
    );
  });

  it("keeps a threshold the caller set and adds only the missing one", () => {
    assert.equal(
      withMallocTunables("glibc.malloc.mmap_threshold=65536"),
      "glibc.malloc.mmap_threshold=65536:glibc.malloc.trim_threshold=131072",
    );
  });

  it("asks for nothing once both are set, so the re-executed process goes on", () => {
    assert.equal(withMallocTunables(withMallocTunables(undefined)), undefined);
  });
});

describe("withSemiSpace", () => {
  it("adds the main thread's semi-space size to the node flags", () => {
    assert.deepEqual(withSemiSpace(["--enable-source-maps"], undefined, SERVE_SEMI_SPACE_FLAGS), [
      "--enable-source-maps",
      ...SERVE_SEMI_SPACE_FLAGS,
    ]);
  });

  it("keeps a size the caller set on the command line or in NODE_OPTIONS", () => {
    assert.equal(withSemiSpace(["--max-semi-space-size=32"], undefined, SERVE_SEMI_SPACE_FLAGS), undefined);
    assert.equal(
      withSemiSpace([], "--import x.mjs --max_semi_space_size=4", SERVE_SEMI_SPACE_FLAGS),
      undefined,
    );
    assert.equal(withSemiSpace(["--min-semi-space-size=16"], undefined, SERVE_SEMI_SPACE_FLAGS), undefined);
  });
});
