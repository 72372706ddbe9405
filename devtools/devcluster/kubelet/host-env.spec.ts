import assert from "node:assert/strict";
import { inheritedEnv } from "./host-env.ts";

describe("inheritedEnv", () => {
  const host = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/root", SECRET: "x" };

  it("passes the named host variables that are set, and no others", () => {
    assert.deepEqual(inheritedEnv(["HOME", "LANG"], "/opt/node/bin", host), { HOME: "/root" });
  });

  it("puts the cluster's Node first on PATH, so a container's `node` is the one that runs the cluster", () => {
    const env = inheritedEnv(["PATH"], "/opt/node/bin", host);
    assert.equal(env["PATH"], "/opt/node/bin:/usr/local/bin:/usr/bin:/bin");
  });

  it("lists the Node's folder once when the host's PATH already has it (as inside npm scripts)", () => {
    const env = inheritedEnv(["PATH"], "/usr/bin", host);
    assert.equal(env["PATH"], "/usr/bin:/usr/local/bin:/bin");
  });

  it("sets no PATH when PATH is not inherited", () => {
    assert.deepEqual(inheritedEnv(["HOME"], "/opt/node/bin", host), { HOME: "/root" });
  });
});
