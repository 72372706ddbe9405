import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { devDown, devStatus, devUp } from "./dev-control.ts";
import { devPaths, writeDevState } from "./dev-state.ts";

describe("dev-control", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-dev-control-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const staleState = () =>
    writeDevState(devPaths(dir), {
      pid: 2 ** 22 + 17,
      url: "https://127.0.0.1:1",
      kubeconfig: path.join(dir, "kubeconfig"),
      clusterId: "gone",
      nodeName: "n",
      podCidr: "127.1.0.0/16",
      startedAt: "2025-01-01T00:00:00.000Z",
    });

  it("treats a state file whose process is gone as not running, and down cleans it up", async () => {
    staleState();
    assert.equal(devStatus(dir), undefined);
    assert.deepEqual(await devDown(dir), { leftovers: [] });
    assert.equal(existsSync(devPaths(dir).state), false);
  });

  it("reports a background process that dies while starting, with its log", async () => {
    const failing = ["-e", "console.error('cannot bind the port'); process.exit(3)"];
    await assert.rejects(
      devUp(dir, process.execPath, failing),
      /exited \(3\) while starting:\ncannot bind the port/,
    );
  });

  it("returns once the background process reports ready", async () => {
    const state = {
      pid: 0,
      url: "https://127.0.0.1:9",
      kubeconfig: "k",
      clusterId: "c",
      nodeName: "n",
      podCidr: "127.1.0.0/16",
      startedAt: "t",
    };
    const script = `process.send(${JSON.stringify({ type: "ready", state })}, () => process.exit(0))`;
    const result = await devUp(dir, process.execPath, ["-e", script]);
    assert.deepEqual(result, { state, alreadyRunning: false });
  });
});
