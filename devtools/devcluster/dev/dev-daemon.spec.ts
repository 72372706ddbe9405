import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../../services/kernel/log.ts";
import { CONFIGMAPS, NODES } from "../objects/refs.ts";
import { runDevCluster, usageText } from "./dev-daemon.ts";
import { devPaths, readDevState } from "./dev-state.ts";

describe("dev-daemon", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-dev-daemon-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the cluster with its files in the dev folder and removes its state when stopped", async () => {
    const running = await runDevCluster(
      { dir, nodeName: "dev-node", gpus: 2, cpu: "4", podCidr: "127.9.0.0/16" },
      createLogger("dev-daemon-spec", "silent"),
    );
    try {
      const paths = devPaths(dir);
      assert.deepEqual(readDevState(paths), running.state);
      assert.equal(running.state.pid, process.pid);
      assert.match(readFileSync(paths.kubeconfig, "utf8"), new RegExp(`server: ${running.state.url}`));
      const node = running.cluster.server.api.get(NODES, "", "dev-node");
      assert.deepEqual(
        (node["status"] as { capacity: Record<string, string> }).capacity["nvidia.com/gpu"],
        "2",
      );
      const usage = usageText(running.state);
      assert.match(usage, new RegExp(`export KUBECONFIG=${paths.kubeconfig}`));
      assert.match(usage, /tessera dev down/);
    } finally {
      await running.stop();
    }
    assert.equal(existsSync(devPaths(dir).state), false);
  });

  it("keeps the cluster's objects across restarts with a state file", async () => {
    const stateFile = path.join(dir, "cluster.json");
    const log = createLogger("dev-daemon-spec", "silent");
    const first = await runDevCluster({ dir, stateFile }, log);
    first.cluster.server.api.create(CONFIGMAPS, "default", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kept" },
      data: { a: "b" },
    });
    await first.stop();
    const second = await runDevCluster({ dir, stateFile }, log);
    try {
      assert.deepEqual(second.cluster.server.api.get(CONFIGMAPS, "default", "kept")["data"], { a: "b" });
      assert.equal(second.state.stateFile, stateFile);
    } finally {
      await second.stop();
    }
  });

  it("refuses options that are not valid", async () => {
    await assert.rejects(runDevCluster({ dir, gpus: -1 }), /gpus/);
  });
});
