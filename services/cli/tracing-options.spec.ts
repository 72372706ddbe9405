import assert from "node:assert/strict";
import { Command, CommanderError } from "commander";
import { tracingEnabled } from "../kernel/telemetry/tracing.ts";
import { withTracing } from "./tracing-options.ts";

function command(seen: boolean[]): Command {
  const cmd = withTracing(
    new Command("serve").action(() => {
      seen.push(tracingEnabled());
    }),
    "tessera-worker",
  );
  cmd.exitOverride().configureOutput({ writeErr: () => {} });
  return cmd;
}

describe("--otlp-endpoint and --trace-sample-ratio", () => {
  it("leave tracing off by default", async () => {
    const seen: boolean[] = [];
    await command(seen).parseAsync([], { from: "user" });
    assert.deepEqual(seen, [false]);
  });

  it("turn tracing on for the action and off after it", async () => {
    const seen: boolean[] = [];
    await command(seen).parseAsync(["--otlp-endpoint", "http://127.0.0.1:1", "--trace-sample-ratio", "0.5"], {
      from: "user",
    });
    assert.deepEqual(seen, [true]);
    assert.equal(tracingEnabled(), false);
  });

  it("refuse a bad endpoint or ratio, naming the flag (exit code 2)", async () => {
    for (const [args, flag] of [
      [["--otlp-endpoint", "grpc://collector:4317"], "--otlp-endpoint"],
      [["--trace-sample-ratio", "2"], "--trace-sample-ratio"],
    ] as const) {
      const error = await command([])
        .parseAsync([...args], { from: "user" })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.ok(error instanceof CommanderError, String(error));
      assert.equal(error.exitCode, 2);
      assert.match(error.message, new RegExp(`^error: ${flag}: `));
    }
  });
});
