// OpenAI's Batch API at the router, driven by the official `openai` Python client (openai_batch.py):
// files.create, batches.create, batches.retrieve, batches.list and files.content, with the router
// stopped mid-batch and a new one started on the same batch folder. The new router resumes the batch
// from its journal: every line is answered exactly once, which the worker's own count of completed
// Generate calls proves (the response cache is off, so every answer is a generation).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { runTessera, type Served } from "../../services/cli/child-process.ts";
import { metricValue, type RunningRouter, startRouter, startWorkers, stopAll } from "../router/fleet.ts";

const run = promisify(execFile);
const script = path.join(import.meta.dirname, "openai_batch.py");
const LINES = 400;

async function python(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run("python3", [script, ...args], { timeout: 300_000 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

interface Counts {
  total: number;
  completed: number;
  failed: number;
}

describe("router Batch API with the openai Python client (e2e)", function () {
  this.timeout(300_000);
  let workers: Served[] = [];
  const routers: RunningRouter[] = [];
  let dir: string;
  let config: Record<string, unknown>;

  before(async () => {
    workers = await startWorkers(1, ["--metrics-port", "0"]);
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-batch-api-"));
    config = { cache: { enabled: false }, batch: { dir: path.join(dir, "store"), maxInFlight: 2 } };
  });

  after(async () => {
    await stopAll(routers);
    await stopAll(workers);
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs a batch to its output and error files, resuming it in a restarted router without repeating a line", async () => {
    const input = path.join(dir, "requests.jsonl");
    const lines = Array.from({ length: LINES }, (_, i) =>
      JSON.stringify({
        custom_id: `req-${i}`,
        method: "POST",
        url: "/v1/completions",
        body: { model: "tiny-llama", prompt: `Story number ${i}:`, max_tokens: 6, temperature: 0 },
      }),
    );
    lines[7] = JSON.stringify({
      custom_id: "req-7",
      method: "POST",
      url: "/v1/completions",
      body: { prompt: "x", temperature: "hot" },
    });
    writeFileSync(input, `${lines.join("\n")}\n`);

    const first = await startRouter(workers, config);
    routers.push(first);
    const created = await python("create", first.httpUrl, input, "/v1/completions");
    const batchId = (created["batch"] as { id: string }).id;
    assert.equal((created["file"] as { purpose: string }).purpose, "batch");
    // Stop the router once the batch is under way.
    let counts: Counts = { total: 0, completed: 0, failed: 0 };
    for (let i = 0; i < 2_000 && counts.completed < 10; i++) {
      const batch = (await (await fetch(`${first.httpUrl}/v1/batches/${batchId}`)).json()) as {
        request_counts: Counts;
      };
      counts = batch.request_counts;
      await delay(20);
    }
    await first.stop();
    const stored = JSON.parse(readFileSync(path.join(dir, "store", "batches", `${batchId}.json`), "utf8"));
    assert.equal(stored.batch.status, "in_progress");
    const doneBefore = stored.batch.request_counts.completed + stored.batch.request_counts.failed;
    assert.ok(doneBefore > 0 && doneBefore < LINES, `${doneBefore} of ${LINES} done when the router stopped`);

    const second = await startRouter(workers, config);
    routers.push(second);
    const ended = await python("wait", second.httpUrl, batchId);
    const batch = ended["batch"] as { status: string; request_counts: Counts };
    assert.equal(batch.status, "completed");
    assert.deepEqual(batch.request_counts, { total: LINES, completed: LINES - 1, failed: 1 });
    assert.equal(ended["listed"], true);
    const output = ended["output"] as {
      custom_id: string;
      response: { status_code: number; body: { choices: { text: string }[] } };
    }[];
    const errors = ended["errors"] as {
      custom_id: string;
      response: { status_code: number; body: { error: { param: string } } };
    }[];
    assert.deepEqual(
      output.map((r) => r.custom_id),
      lines.map((_, i) => `req-${i}`).filter((id) => id !== "req-7"),
    );
    assert.deepEqual(
      errors.map((r) => [r.custom_id, r.response.status_code, r.response.body.error.param]),
      [["req-7", 400, "temperature"]],
    );
    // Each line ran once: the worker completed exactly as many generations as there were good lines.
    const metrics = `http://${workers[0]!.address.split(":")[0]}:${workers[0]!.logs.find((l) => l["msg"] === "metrics served at /metrics")?.["metricsPort"]}/metrics`;
    const generations = await metricValue(metrics, "tessera_rpc_calls_total", {
      method: "Generate",
      code: "OK",
    });
    assert.equal(generations, LINES - 1);
    // And the answers are the router's own.
    const direct = (await (
      await fetch(`${second.httpUrl}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "tiny-llama",
          prompt: "Story number 123:",
          max_tokens: 6,
          temperature: 0,
        }),
      })
    ).json()) as { choices: { text: string }[] };
    assert.equal(
      output.find((r) => r.custom_id === "req-123")?.response.body.choices[0]?.text,
      direct.choices[0]?.text,
    );
  });
  it("tessera batch --url sends a file through the router with the same answers as its Batch API", async () => {
    const router = routers.at(-1)!;
    const input = path.join(dir, "requests.jsonl");
    const head = path.join(dir, "head.jsonl");
    writeFileSync(head, readFileSync(input, "utf8").split("\n").slice(0, 20).join("\n"));
    const output = path.join(dir, "via-url.jsonl");
    const run = await runTessera(["batch", "--url", router.httpUrl, "--input", head, "--output", output]);
    assert.equal(run.code, 0, run.stderr);
    const viaUrl = readFileSync(output, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(viaUrl.length, 20);
    assert.deepEqual(
      viaUrl.map((r) => [r.custom_id, r.response.status_code]),
      Array.from({ length: 20 }, (_, i) => [`req-${i}`, i === 7 ? 400 : 200]),
    );
    const batchOutput = (await (await fetch(`${router.httpUrl}/v1/batches?limit=1`)).json()) as {
      data: { output_file_id: string }[];
    };
    const content = await (
      await fetch(`${router.httpUrl}/v1/files/${batchOutput.data[0]!.output_file_id}/content`)
    ).text();
    const byId = new Map(
      content
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .map((r) => [r.custom_id, r.response.body.choices[0].text]),
    );
    for (const r of viaUrl.filter((r) => r.response.status_code === 200))
      assert.equal(r.response.body.choices[0].text, byId.get(r.custom_id), r.custom_id);
  });
});
