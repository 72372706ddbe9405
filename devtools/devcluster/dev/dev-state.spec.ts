import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { devPaths, isAlive, readDevState, removeDevState, writeDevState } from "./dev-state.ts";

describe("dev-state", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-dev-state-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the running cluster's state in the dev folder", () => {
    const paths = devPaths(dir);
    assert.equal(paths.kubeconfig, path.join(dir, "kubeconfig"));
    const state = {
      pid: process.pid,
      url: "https://127.0.0.1:6443",
      kubeconfig: paths.kubeconfig,
      clusterId: "abc",
      nodeName: "n",
      podCidr: "127.1.0.0/16",
      startedAt: "2025-01-01T00:00:00.000Z",
    };
    writeDevState(paths, state);
    assert.deepEqual(readDevState(paths), state);
    removeDevState(paths);
    assert.equal(readDevState(paths), undefined);
  });

  it("ignores a state file it cannot read", () => {
    const paths = devPaths(dir);
    writeFileSync(paths.state, "{not json");
    assert.equal(readDevState(paths), undefined);
    writeFileSync(paths.state, JSON.stringify({ pid: "x" }));
    assert.equal(readDevState(paths), undefined);
  });

  it("tells running processes from gone ones", () => {
    assert.equal(isAlive(process.pid), true);
    assert.equal(isAlive(2 ** 22 + 17), false);
  });
});
