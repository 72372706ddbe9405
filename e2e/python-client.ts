// The Python clients the e2e specs drive (the official `openai` package, grpcio): one script per spec
// that reads a JSON request on stdin and answers JSON on stdout. A missing package fails the spec,
// naming it, rather than skipping it: CI installs them (scripts/setup.sh).
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import path from "node:path";

/** The interpreter the clients run in ($PYTHON, default python3). */
export const PYTHON = process.env["PYTHON"] ?? "python3";

/** Throws, naming what to install, unless $PYTHON can import every one of `modules`. */
export function requirePythonModules(...modules: string[]): void {
  const probe = spawnSync(PYTHON, ["-c", `import ${modules.join(", ")}`], { encoding: "utf8" });
  if (probe.status !== 0)
    throw new Error(
      `this e2e needs ${PYTHON} with ${modules.join(" and ")} (scripts/setup.sh, or pip install ` +
        `${modules.map((m) => (m === "grpc" ? "grpcio" : m)).join(" ")}): ${probe.error?.message ?? probe.stderr.trim()}`,
    );
}

/** Runs `script` with `request` as JSON on stdin; its stdout parsed as JSON, or an error with its stderr. */
export async function runPythonJson<T>(script: string, request: unknown, cwd?: string): Promise<T> {
  const child = spawn(PYTHON, [script], { stdio: ["pipe", "pipe", "pipe"], ...(cwd && { cwd }) });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk));
  child.stdin.end(JSON.stringify(request));
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`${path.basename(script)} exited ${code}:\n${stderr}`);
  return JSON.parse(stdout) as T;
}
