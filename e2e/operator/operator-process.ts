// `tessera operator` as a child process, as a user runs it: its metrics port is read from its
// "operator started" log line (--metrics-port 0), and it can be stopped or killed and run again.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { createInterface } from "node:readline";

const root = path.resolve(import.meta.dirname, "../..");
const main = path.join(root, "services/cli/main.ts");

export interface OperatorProcess {
  child: ChildProcess;
  metricsPort: number;
  logs: Record<string, unknown>[];
  exited: Promise<number | null>;
  /** Sum of tessera_operator_reconciles_total for one controller, read from /metrics. */
  reconciles(controller: string): Promise<number>;
}

export async function startOperatorProcess(
  kubeconfig: string,
  extra: string[] = [],
): Promise<OperatorProcess> {
  const args = [main, "operator", "--kubeconfig", kubeconfig, "--all-namespaces", "--no-leader-elect"];
  args.push("--metrics-port", "0", "--health-port", "0", "--bind-address", "127.0.0.1", ...extra);
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, TESSERA_LOG_LEVEL: "info" },
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  const logs: Record<string, unknown>[] = [];
  const metricsPort = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on("line", (line) => {
      try {
        const log = JSON.parse(line) as Record<string, unknown>;
        logs.push(log);
        if (log["msg"] === "operator started") resolve(Number(log["metricsPort"]));
      } catch {
        logs.push({ line });
      }
    });
    void exited.then((code) =>
      reject(new Error(`tessera operator exited (${code}):\n${JSON.stringify(logs)}`)),
    );
  });
  return {
    child,
    metricsPort,
    logs,
    exited,
    reconciles: async (controller) => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const pattern = new RegExp(
        `^tessera_operator_reconciles_total\\{[^}]*controller="${controller}"[^}]*\\} (\\d+)`,
        "gm",
      );
      return [...text.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0);
    },
  };
}
