import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import os from "node:os";
import { exitCodeOf, hostProcessLauncher, type LaunchSpec } from "./host-process.ts";

const node = process.execPath;
const spec = (args: string[], env: Record<string, string> = {}) => {
  const output: string[] = [];
  const launch: LaunchSpec = {
    command: node,
    args,
    env: { PATH: process.env["PATH"] ?? "", ...env },
    cwd: os.tmpdir(),
    onOutput: (stream, chunk) => output.push(`${stream}:${Buffer.from(chunk).toString()}`),
  };
  return { launch, output };
};

/** Running and not a zombie. */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};
const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("host-process", () => {
  it("runs a command with its env and collects its output and exit code", async () => {
    const { launch, output } = spec(
      ["-e", "console.log(process.env.GREETING); console.error('err'); process.exit(3)"],
      {
        GREETING: "hi",
      },
    );
    const proc = hostProcessLauncher(launch);
    assert.ok(proc.pid);
    assert.deepEqual(await proc.exited, { exitCode: 3 });
    assert.deepEqual(output.sort(), ["stderr:err\n", "stdout:hi\n"]);
  });

  it("reports a command that does not exist", async () => {
    const proc = hostProcessLauncher({ ...spec([]).launch, command: "/no/such/binary" });
    const exit = await proc.exited;
    assert.equal(exit.exitCode, 128);
    assert.match(exit.error ?? "", /ENOENT/);
  });

  it("signals the whole process group and kills what is left when the main process exits", async () => {
    const script = `
      process.on("SIGTERM", () => process.exit(0));
      const { spawn } = require("node:child_process");
      const child = spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: "ignore" });
      console.log(child.pid);
      setInterval(() => {}, 1000);`;
    const { launch, output } = spec(["-e", script]);
    const proc = hostProcessLauncher(launch);
    while (output.length === 0) await tick();
    const grandchild = Number(output[0]?.slice("stdout:".length));
    assert.ok(alive(grandchild));
    proc.kill("SIGTERM");
    assert.equal((await proc.exited).exitCode, 0);
    while (alive(grandchild)) await tick();
  });

  it("reports a signal as 128 + its number", () => {
    assert.equal(exitCodeOf(null, "SIGKILL"), 137);
    assert.equal(exitCodeOf(null, "SIGTERM"), 143);
    assert.equal(exitCodeOf(0, null), 0);
  });
});
