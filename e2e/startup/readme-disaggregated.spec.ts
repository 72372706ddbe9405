// README.md's "Disaggregated serving" block as a user runs it: a checkpoint, redis-server, a prefill and a
// decode `tessera serve`, the endpoints file with their roles, `tessera router`, then curl sees the
// request served disaggregated (x-tessera-path, x-tessera-endpoints), the endpoint listing with roles and
// the router's serving-path metric. The block runs in bash as written from the repository root; only its
// ports and its two /tmp folders are replaced by free ones (tests run side by side on one machine).
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freePort } from "../../services/kernel/free-port.ts";

const root = path.resolve(import.meta.dirname, "../..");

function disaggregatedBlock(): string {
  const readme = readFileSync(path.join(root, "README.md"), "utf8");
  const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? "")
    .find((b) => b.includes("role: prefill") && b.includes("redis-server"));
  if (block === undefined) throw new Error("README.md has no disaggregated serving block");
  return block;
}

describe("README.md's disaggregated serving, as written (e2e)", function () {
  this.timeout(240_000);
  let script: ChildProcess | undefined;
  let dir: string;

  after(() => {
    // The block's background processes (redis-server, workers, router) are in the script's group.
    if (script?.pid !== undefined) {
      try {
        process.kill(-script.pid, "SIGTERM");
      } catch {}
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("serves a request disaggregated and shows it in headers, the endpoint listing and the metrics", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-readme-disagg-"));
    const ports = new Map<string, number>();
    for (const port of ["6379", "50061", "50062", "50060", "8080", "9090"]) ports.set(port, await freePort());
    let block = disaggregatedBlock()
      .replaceAll("/tmp/tiny-llama", path.join(dir, "tiny-llama"))
      .replaceAll("/tmp/tessera-disagg", path.join(dir, "config"));
    for (const [from, to] of ports) block = block.replace(new RegExp(`\\b${from}\\b`, "g"), String(to));
    const env = {
      ...process.env,
      PATH: [path.join(root, "node_modules/.bin"), process.env["PATH"]].join(":"),
    };
    script = spawn("bash", ["-euo", "pipefail", "-c", block], { cwd: root, env, detached: true });
    let output = "";
    script.stdout?.on("data", (chunk: Buffer) => (output += chunk));
    script.stderr?.on("data", (chunk: Buffer) => (output += chunk));
    const [code] = (await once(script, "exit")) as [number | null];
    assert.equal(code, 0, output);
    assert.match(output, /^x-tessera-path: disaggregated\r?$/im, output);
    assert.match(output, /^x-tessera-endpoints: prefill-0=prefill,decode-0=decode\r?$/im, output);
    assert.match(output, /"object":"text_completion"/, output);
    assert.match(output, /"name":"prefill-0","address":"127\.0\.0\.1:\d+","role":"prefill"/, output);
    assert.match(output, /"name":"decode-0","address":"127\.0\.0\.1:\d+","role":"decode"/, output);
    assert.match(output, /tessera_router_serving_paths_total\{[^}]*path="disaggregated"[^}]*\} 1\b/, output);
  });
});
