// A real Prometheus (Debian's `prometheus` binary) for the end-to-end tests: scrapes the given targets
// every second, loads the given rule files, answers its HTTP API on a free loopback port, and keeps its
// data in a temp folder removed on stop.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { stringify } from "yaml";
import { freePort } from "../../services/kernel/free-port.ts";

export interface ScrapeJob {
  job: string;
  /** host:port of each /metrics. */
  targets: string[];
}

export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface PrometheusServer {
  url: string;
  dir: string;
  /** An instant query; rejects on an API error (a bad expression included). */
  query(expr: string): Promise<Sample[]>;
  /** GET an API path (e.g. /api/v1/rules) and return its `data`. */
  api<T>(pathAndQuery: string): Promise<T>;
  stop(): Promise<void>;
}

export async function startPrometheus(
  jobs: ScrapeJob[],
  ruleFiles: Record<string, string> = {},
): Promise<PrometheusServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-prometheus-"));
  for (const [name, content] of Object.entries(ruleFiles)) writeFileSync(path.join(dir, name), content);
  const config = {
    global: { scrape_interval: "1s", scrape_timeout: "1s", evaluation_interval: "1s" },
    rule_files: Object.keys(ruleFiles),
    scrape_configs: jobs.map((j) => ({ job_name: j.job, static_configs: [{ targets: j.targets }] })),
  };
  writeFileSync(path.join(dir, "prometheus.yml"), stringify(config));
  const port = await freePort();
  const child: ChildProcess = spawn(
    "prometheus",
    [
      `--config.file=${path.join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${path.join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk));
  const exited = once(child, "exit");
  const url = `http://127.0.0.1:${port}`;
  for (let ready = false; !ready; ) {
    if (child.exitCode !== null) throw new Error(`prometheus exited (${child.exitCode}):\n${stderr}`);
    ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (!ready) await delay(50);
  }
  const api = async <T>(pathAndQuery: string): Promise<T> => {
    const body = (await (await fetch(`${url}${pathAndQuery}`)).json()) as {
      status: string;
      data: T;
      error?: string;
    };
    if (body.status !== "success") throw new Error(`prometheus ${pathAndQuery}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    dir,
    api,
    query: async (expr) =>
      (await api<{ result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
