// A whole dev cluster (API server, scheduler, process kubelet, controllers) in the test process
// for an end-to-end describe block, with real kubectl/helm run as child processes. Pod processes
// run as children of this process on loopback IPs from a random /16, so parallel clusters (a
// developer's `tessera dev up`) do not collide. Back-off is short so restarts are quick.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { type DevCluster, startDevCluster } from "../../devtools/devcluster/dev-cluster.ts";
import type { Pod } from "../../devtools/devcluster/objects/pod-types.ts";
import { createLogger } from "../../services/kernel/log.ts";
import { type ClientRelease, clientBinaries } from "./client-binaries.ts";
import { clientLimitMs } from "./client-limit.ts";
import { operatorKubeconfig } from "./operator-credentials.ts";

export interface ClientRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface DevClusterFixture {
  cluster: DevCluster;
  dir: string;
  kubeconfig: string;
  podCidr: string;
  kubectl(...args: string[]): Promise<ClientRun>;
  /** kubectl that must succeed; returns stdout. */
  ok(...args: string[]): Promise<string>;
  helm(...args: string[]): Promise<ClientRun>;
  file(name: string, content: string): string;
  pod(name: string, namespace?: string): Pod;
  /** A kubeconfig for the operator's service account under its ClusterRole (operator-credentials.ts). */
  operatorKubeconfig(): Promise<string>;
  close(): Promise<void>;
}

export function runClient(
  binary: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<ClientRun> {
  const limitMs = clientLimitMs(args);
  return new Promise((resolve) => {
    const child = execFile(
      binary,
      args,
      { env, cwd, timeout: limitMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        // A client killed at the limit has said nothing; say so, or the failure reads as an empty error.
        const killed = err?.killed
          ? `\n(killed by ${err.signal} after ${limitMs / 1000} s, the fixture's limit)`
          : "";
        resolve({ code, stdout: String(stdout), stderr: String(stderr) + killed });
      },
    );
    child.stdin?.end();
  });
}

export async function startDevClusterFixture(release: ClientRelease = "v35"): Promise<DevClusterFixture> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-kubelet-e2e-"));
  const kubeconfig = path.join(dir, "kubeconfig");
  const podCidr = `127.${20 + Math.floor(Math.random() * 200)}.0.0/16`;
  const cluster = await startDevCluster(
    {
      kubeconfigPath: kubeconfig,
      node: {
        nodeName: "tessera-node",
        podCidr,
        rootDir: path.join(dir, "kubelet"),
        capacity: { cpu: "8", memory: "16Gi", "nvidia.com/gpu": 1 },
        backoff: { initialMs: 200, maxMs: 1_000, resetAfterMs: 60_000 },
        configRetryMs: 200,
      },
    },
    { log: createLogger("devcluster-e2e", process.env["TESSERA_LOG_LEVEL"] ?? "warn") },
  );
  const binaries = clientBinaries(release);
  const env = {
    PATH: process.env["PATH"] ?? "",
    HOME: dir,
    KUBECONFIG: kubeconfig,
    KUBECACHEDIR: path.join(dir, "kube-cache"),
    HELM_CACHE_HOME: path.join(dir, "helm", "cache"),
    HELM_CONFIG_HOME: path.join(dir, "helm", "config"),
    HELM_DATA_HOME: path.join(dir, "helm", "data"),
  };
  const kubectl = (...args: string[]) => runClient(binaries.kubectl, args, env, dir);
  const file = (name: string, content: string) => {
    const target = path.join(dir, name);
    writeFileSync(target, content);
    return target;
  };
  return {
    cluster,
    dir,
    kubeconfig,
    podCidr,
    kubectl,
    ok: async (...args) => {
      const result = await kubectl(...args);
      if (result.code !== 0)
        throw new Error(`kubectl ${args.join(" ")} failed (${result.code}):\n${result.stderr}`);
      return result.stdout;
    },
    helm: (...args) => runClient(binaries.helm, args, env, dir),
    file,
    pod: (name, namespace = "default") =>
      cluster.server.api.get({ group: "", version: "v1", resource: "pods" }, namespace, name) as Pod,
    operatorKubeconfig: () => operatorKubeconfig({ kubectl, file, server: cluster.server }),
    close: async () => {
      await cluster.close({ graceSeconds: 0 });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until check returns a value (not undefined/false), or fails after timeoutMs with `what`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    await delay(50);
  }
  throw new Error(`timed out waiting for ${what}`, { cause: last });
}

/** Pids of running processes whose command line contains marker (from /proc, as ps reads it). */
export function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (/^\d+ \(.*\) Z/.test(stat)) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) pids.push(Number(entry));
    } catch {}
  }
  return pids;
}

/** GET http://ip:port/path as text. */
export async function httpGet(ip: string, port: number, urlPath = "/"): Promise<string> {
  const response = await fetch(`http://${ip}:${port}${urlPath}`, { signal: AbortSignal.timeout(5_000) });
  return response.text();
}
