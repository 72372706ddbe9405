import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CLUSTER_ENV, isClusterProcess, killLeftovers, ProcessRegistry } from "./process-registry.ts";

describe("process-registry", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-registry-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps the running pids in its file", () => {
    const file = path.join(dir, "processes.json");
    const registry = new ProcessRegistry(file);
    registry.set(10, true);
    registry.set(11, true);
    registry.set(10, false);
    assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { pids: [11] });
  });

  it("kills listed processes that carry the cluster's mark, and only those", async () => {
    const file = path.join(dir, "processes.json");
    const sleeper = (mark: string) =>
      spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
        env: { [CLUSTER_ENV]: mark },
        detached: true,
        stdio: "ignore",
      });
    const ours = sleeper("c1");
    const theirs = sleeper("c2");
    try {
      const registry = new ProcessRegistry(file);
      registry.set(ours.pid ?? 0, true);
      registry.set(theirs.pid ?? 0, true);
      assert.equal(isClusterProcess(ours.pid ?? 0, "c1"), true);
      const exited = once(ours, "exit");
      assert.deepEqual(killLeftovers(file, "c1"), [ours.pid]);
      await exited;
      assert.equal(isClusterProcess(theirs.pid ?? 0, "c2"), true);
    } finally {
      ours.kill("SIGKILL");
      theirs.kill("SIGKILL");
    }
  });
});
