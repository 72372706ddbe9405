// Real processes for the router's end-to-end specs: tiny workers (`tessera serve`), and routers
// (`tessera router --config FILE`) over them, with the config and endpoints files written to a temp
// folder (a worker given as `{ served, role }` is listed with that role: prefill, decode or both). A
// router is handed back once it logs its ports and its /ready answers 200.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as delay } from "node:timers/promises";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { tinyCheckpoint } from "../checkpoint.ts";

const main = path.resolve(import.meta.dirname, "../../services/cli/main.ts");

export async function startWorkers(count: number, args: string[] = []): Promise<Served[]> {
  const modelDir = await tinyCheckpoint();
  const workers = await Promise.all(Array.from({ length: count }, () => startServe(modelDir, args)));
  await Promise.all(workers.map((w) => waitUntilServing(w.address, 60_000)));
  return workers;
}

export async function stopAll(
  processes: readonly { child: ChildProcess; exited: Promise<unknown> }[],
): Promise<void> {
  for (const p of processes) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await Promise.all(processes.map((p) => p.exited));
}

let shared: Promise<Served[]> | undefined;
/** Three workers shared by the specs that do not stop them, started once per test process. */
export function sharedWorkers(): Promise<Served[]> {
  shared ??= startWorkers(3).then((workers) => {
    process.once("exit", () => {
      for (const w of workers) w.child.kill("SIGKILL");
    });
    return workers;
  });
  return shared;
}

/** A worker listed with a role (disaggregated serving); a bare worker is "both". */
export interface RoledWorker {
  served: Served;
  role: "both" | "prefill" | "decode";
}

export type FleetWorker = Served | RoledWorker;

function endpointOf(worker: FleetWorker) {
  if ("served" in worker)
    return { name: worker.served.address, address: worker.served.address, role: worker.role };
  return { name: worker.address, address: worker.address };
}

export interface RunningRouter {
  grpcAddress: string;
  httpUrl: string;
  metricsUrl: string | undefined;
  child: ChildProcess;
  exited: Promise<number | null>;
  logs: Record<string, unknown>[];
  dir: string;
  /** Rewrites the endpoints file (the router re-reads it every 100 ms). */
  setEndpoints(workers: readonly FleetWorker[]): void;
  stop(): Promise<number | null>;
}

/** Starts `tessera router` over `workers` with `config` merged into a test config. */
export async function startRouter(
  workers: readonly FleetWorker[],
  config: Record<string, unknown> = {},
): Promise<RunningRouter> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-router-"));
  const endpoints = path.join(dir, "endpoints.json");
  const setEndpoints = (list: readonly FleetWorker[]) =>
    writeFileSync(endpoints, JSON.stringify({ endpoints: list.map(endpointOf) }));
  setEndpoints(workers);
  const file = path.join(dir, "router.json");
  const full = {
    grpcPort: 0,
    httpPort: 0,
    drainTimeoutMs: 2_000,
    models: [{ id: "tiny-llama", tokenizer: await tinyCheckpoint() }],
    discovery: { type: "static", file: endpoints, pollMs: 100 },
    ...config,
  };
  writeFileSync(file, JSON.stringify(full));
  const child = spawn(process.execPath, [main, "router", "--config", file], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  exited.then(() => rmSync(dir, { recursive: true, force: true }));
  const logs: Record<string, unknown>[] = [];
  const routing = new Promise<Record<string, unknown>>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on("line", (line) => {
      const log = parse(line);
      logs.push(log);
      if (log["msg"] === "routing") resolve(log);
    });
    exited.then((code) =>
      reject(new Error(`tessera router exited (${code}) before routing:\n${JSON.stringify(logs)}`)),
    );
  });
  const ports = await routing;
  const httpUrl = `http://127.0.0.1:${ports["httpPort"]}`;
  await waitUntilReady(httpUrl);
  return {
    grpcAddress: `127.0.0.1:${ports["grpcPort"]}`,
    httpUrl,
    metricsUrl:
      ports["metricsPort"] === undefined ? undefined : `http://127.0.0.1:${ports["metricsPort"]}/metrics`,
    child,
    exited,
    logs,
    dir,
    setEndpoints,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

async function waitUntilReady(httpUrl: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const ready = await fetch(`${httpUrl}/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return;
    await delay(50);
  }
  throw new Error(`${httpUrl} did not become ready`);
}

/** A Prometheus counter or gauge value from /metrics text, summed over series matching `labels`. */
export async function metricValue(
  url: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await (await fetch(url)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    total += Number(line.split(" ").at(-1));
  }
  return total;
}

function parse(line: string): Record<string, unknown> {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return { msg: line };
  }
}
