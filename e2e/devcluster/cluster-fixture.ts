// A dev cluster API server for an end-to-end describe block, with a private kubeconfig and client
// caches, and a way to run the real kubectl/helm against it. Clients run as child processes
// asynchronously: the server lives in this process and must keep serving while they run.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  type ApiServer,
  type ApiServerConfig,
  startApiServer,
} from "../../devtools/devcluster/apiserver/api-server.ts";
import { createLogger } from "../../services/kernel/log.ts";
import { clientBinaries } from "./client-binaries.ts";
import { operatorKubeconfig } from "./operator-credentials.ts";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ClusterFixture {
  server: ApiServer;
  dir: string;
  kubeconfig: string;
  /** Runs a client binary with KUBECONFIG and isolated caches; never throws on a non-zero exit. */
  run(binary: string, args: string[], input?: string): Promise<RunResult>;
  /** Writes a file in the fixture's folder and returns its path. */
  file(name: string, content: string): string;
  /** A kubeconfig for the operator's service account under its ClusterRole (operator-credentials.ts). */
  operatorKubeconfig(): Promise<string>;
  close(): Promise<void>;
}

export async function startClusterFixture(config: ApiServerConfig = {}): Promise<ClusterFixture> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-devcluster-"));
  const server = await startApiServer(config, {
    log: createLogger("devcluster-e2e", process.env["TESSERA_LOG_LEVEL"] ?? "warn"),
  });
  const kubeconfig = path.join(dir, "kubeconfig");
  await server.writeKubeconfig(kubeconfig);
  const env = {
    PATH: process.env["PATH"] ?? "",
    HOME: dir,
    KUBECONFIG: kubeconfig,
    KUBECACHEDIR: path.join(dir, "kube-cache"),
    HELM_CACHE_HOME: path.join(dir, "helm", "cache"),
    HELM_CONFIG_HOME: path.join(dir, "helm", "config"),
    HELM_DATA_HOME: path.join(dir, "helm", "data"),
  };
  const run = (binary: string, args: string[], input?: string) =>
    new Promise<RunResult>((resolve) => {
      const child = execFile(
        binary,
        args,
        { env, cwd: dir, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolve({ code, stdout: String(stdout), stderr: String(stderr) });
        },
      );
      if (input !== undefined) child.stdin?.end(input);
      else child.stdin?.end();
    });
  const file = (name: string, content: string) => {
    const target = path.join(dir, name);
    writeFileSync(target, content);
    return target;
  };
  const kubectl = (...args: string[]) => run(clientBinaries("v35").kubectl, args);
  return {
    server,
    dir,
    kubeconfig,
    run,
    file,
    operatorKubeconfig: () => operatorKubeconfig({ kubectl, file, server }),
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
