// `tessera dev up` / `down` as a user runs them: the cluster starts in the background within a
// few seconds, kubectl works with the kubeconfig it prints, and `down` leaves no process behind
// (checked with ps) — also after the cluster process itself was killed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runTessera } from "../../services/cli/child-process.ts";
import { clientBinaries } from "./client-binaries.ts";
import { eventually, runClient } from "./kubelet-fixture.ts";
import { toYaml, webDeployment } from "./kubelet-manifests.ts";

/** Command lines of running processes, as ps prints them (full width). */
function ps(): string[] {
  return execFileSync("ps", ["-eww", "-o", "pid=,stat=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^\s*\d+\s+Z/.test(line));
}

const psHas = (text: string) => ps().some((line) => line.includes(text));

describe("tessera dev up / down (e2e)", function () {
  this.timeout(90_000);
  let dir: string;
  let kubectl: (...args: string[]) => ReturnType<typeof runClient>;
  const marker = `dev-up-e2e-${process.pid}`;
  const podCidr = `127.${20 + Math.floor(Math.random() * 200)}.0.0/16`;
  const up = (...args: string[]) => runTessera(["dev", "up", "--dir", dir, "--pod-cidr", podCidr, ...args]);
  const down = () => runTessera(["dev", "down", "--dir", dir]);
  const ok = async (...args: string[]) => {
    const result = await kubectl(...args);
    assert.equal(result.code, 0, `kubectl ${args.join(" ")}:\n${result.stderr}`);
    return result.stdout;
  };
  const pidOf = (stdout: string) => Number(/\(pid (\d+)\)/.exec(stdout)?.[1]);

  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-dev-up-"));
    const env = { PATH: process.env["PATH"] ?? "", HOME: dir, KUBECONFIG: path.join(dir, "kubeconfig") };
    kubectl = (...args) => runClient(clientBinaries("v35").kubectl, args, env, dir);
  });
  after(async () => {
    await down();
    rmSync(dir, { recursive: true, force: true });
  });

  it("starts in the background, prints how to use kubectl, and runs pods", async () => {
    const started = await up();
    assert.equal(started.code, 0, started.stderr);
    assert.match(started.stdout, new RegExp(`export KUBECONFIG=${path.join(dir, "kubeconfig")}`));
    assert.match(started.stdout, /kubectl get nodes/);
    const pid = pidOf(started.stdout);
    assert.ok(
      ps().some((l) => l.trim().startsWith(`${pid} `) && l.includes("dev run")),
      "the cluster process runs",
    );
    assert.match(await ok("get", "nodes"), /tessera-node\s+Ready/);
    await ok("apply", "-f", writeManifest(dir, toYaml(webDeployment(marker, 2, "1"))));
    await ok("rollout", "status", "deployment/web", "--timeout=60s");
    assert.equal((await ok("get", "pods", "--no-headers")).trim().split("\n").length, 2);
    assert.equal(ps().filter((l) => l.includes(marker)).length, 2);
    const again = await up();
    assert.match(again.stdout, /already running/);
    assert.equal(pidOf(again.stdout), pid);
  });

  it("down stops the cluster and every pod process", async () => {
    const stopped = await down();
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, /Stopped the dev cluster \(pid \d+\)/);
    assert.equal(psHas(marker), false, "no pod process is left");
    assert.equal(psHas(`dev run --dir ${dir}`), false, "no cluster process is left");
    assert.equal(existsSync(path.join(dir, "state.json")), false);
    assert.match((await down()).stdout, /No dev cluster was running/);
  });

  it("down kills the pods of a cluster process that was killed", async () => {
    const started = await up();
    assert.equal(started.code, 0, started.stderr);
    await ok("apply", "-f", writeManifest(dir, toYaml(webDeployment(marker, 1, "1"))));
    await ok("rollout", "status", "deployment/web", "--timeout=60s");
    process.kill(pidOf(started.stdout), "SIGKILL");
    await eventually("the cluster process to die", () => !psHas(`dev run --dir ${dir}`));
    assert.equal(psHas(marker), true, "its pod outlived it");
    const stopped = await down();
    assert.match(stopped.stdout, /Killed 1 pod process\(es\) left behind/);
    assert.equal(psHas(marker), false);
  });
});

function writeManifest(dir: string, yaml: string): string {
  const file = path.join(dir, "app.yaml");
  writeFileSync(file, yaml);
  return file;
}
