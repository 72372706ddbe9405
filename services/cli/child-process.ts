// Runs the `tessera` CLI as a child process, as a user would: one-shot commands, or a server whose
// port is read from its "serving" log line (so `--port 0` works). Used by the e2e tests and the demo.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { createInterface } from "node:readline";

const root = path.resolve(import.meta.dirname, "../..");
const main = path.join(import.meta.dirname, "main.ts");

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `tessera ...args` to completion. */
export async function runTessera(args: string[]): Promise<Finished> {
  const child = spawn(process.execPath, [main, ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  const [code] = (await once(child, "close")) as [number | null];
  return { code, stdout, stderr };
}

export interface Served {
  address: string;
  child: ChildProcess;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** The structured log lines seen so far. */
  logs: Record<string, unknown>[];
}

/** Starts `tessera serve` on a free port and resolves once it logs the port it listens on. */
export async function startServe(
  modelDir: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<Served> {
  const child = spawn(process.execPath, [main, "serve", "--model", modelDir, "--port", "0", ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  const logs: Record<string, unknown>[] = [];
  const port = new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stderr }).on("line", (line) => {
      const log = parseLog(line);
      logs.push(log);
      if (log["msg"] === "serving") resolve(Number(log["port"]));
    });
    exited.then((code) =>
      reject(new Error(`tessera serve exited (${code}) before serving:\n${JSON.stringify(logs)}`)),
    );
  });
  return { address: `127.0.0.1:${await port}`, child, exited, logs };
}

function parseLog(line: string): Record<string, unknown> {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return { msg: line };
  }
}
