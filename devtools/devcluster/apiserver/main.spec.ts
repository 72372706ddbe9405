import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";

describe("main (the API server as a script)", () => {
  it("starts, writes a kubeconfig, prints how to use it and stops on SIGTERM", async () => {
    const kubeconfig = path.join(mkdtempSync(path.join(os.tmpdir(), "apiserver-main-")), "kubeconfig");
    const child = spawn(
      process.execPath,
      [path.join(import.meta.dirname, "main.ts"), "--kubeconfig", kubeconfig],
      { env: { ...process.env, TESSERA_LOG_LEVEL: "warn" } },
    );
    let stdout = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes("KUBECONFIG")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`exited early with ${code}`)));
    });
    assert.match(stdout, /API server: https:\/\/127\.0\.0\.1:\d+\nexport KUBECONFIG=/);
    assert.ok(existsSync(kubeconfig));
    child.kill("SIGTERM");
    const code = await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(code, 0);
  });
});
