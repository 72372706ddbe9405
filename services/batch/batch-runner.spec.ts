import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { stringify } from "csv-stringify/sync";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { parquetWriteFile } from "hyparquet-writer";
import { type BatchFormat, openBatchFiles } from "./batch-format.ts";
import { runBatch } from "./batch-runner.ts";
import type { BatchExecutor, BatchRequest, BatchResult } from "./batch-types.ts";

/** Answers like /v1/completions would, out of order (a random delay each), counting calls. */
function fakeEndpoint() {
  const served: string[] = [];
  const execute: BatchExecutor = async (request: BatchRequest, signal) => {
    await delay(Math.random() * 5, undefined, { signal });
    served.push(request.customId);
    const prompt = String(request.body["prompt"] ?? JSON.stringify(request.body["messages"]));
    if (request.body["temperature"] !== undefined && typeof request.body["temperature"] !== "number")
      return {
        statusCode: 400,
        requestId: request.customId,
        body: { error: { message: "temperature: expected number" } },
      };
    const text = [...prompt].reverse().join("");
    return {
      statusCode: 200,
      requestId: `req-${request.customId}`,
      body: {
        choices: [{ index: 0, text, finish_reason: "length" }],
        usage: { prompt_tokens: prompt.length, completion_tokens: Number(request.body["max_tokens"] ?? 16) },
      },
    };
  };
  return { served, execute };
}

const PROMPTS = Array.from({ length: 60 }, (_, i) => `prompt number ${i}, "quoted",\nand a newline`);

function writeInputs(dir: string) {
  const jsonl = path.join(dir, "in.jsonl");
  writeFileSync(
    jsonl,
    PROMPTS.map((prompt, i) =>
      JSON.stringify({
        custom_id: `row-${i + 1}`,
        method: "POST",
        url: "/v1/completions",
        body: { prompt, max_tokens: 4, temperature: 0 },
      }),
    ).join("\n"),
  );
  const csv = path.join(dir, "in.csv");
  writeFileSync(
    csv,
    stringify([
      ["prompt", "max_tokens", "temperature", "label"],
      ...PROMPTS.map((p, i) => [p, 4, 0, `l${i}`]),
    ]),
  );
  const parquet = path.join(dir, "in.parquet");
  parquetWriteFile({
    filename: parquet,
    rowGroupSize: 7, // several row groups, read one after the other
    columnData: [
      { name: "prompt", data: PROMPTS, type: "STRING" },
      { name: "max_tokens", data: PROMPTS.map(() => 4), type: "INT32" },
      { name: "temperature", data: PROMPTS.map(() => 0), type: "DOUBLE" },
      { name: "label", data: PROMPTS.map((_, i) => `l${i}`), type: "STRING" },
    ],
  });
  return { jsonl, csv, parquet };
}

/** Each row's (custom_id, output text) in output order, whatever the format. */
async function outputs(format: BatchFormat, file: string): Promise<{ id: string; text: string }[]> {
  if (format === "jsonl")
    return readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as BatchResult)
      .map((r) => ({
        id: r.custom_id,
        text: (r.response!.body as { choices: { text: string }[] }).choices[0]!.text,
      }));
  if (format === "csv") {
    const { parse } = await import("csv-parse/sync");
    const rows = parse(readFileSync(file), { columns: true }) as Record<string, string>[];
    return rows.map((r, i) => ({ id: `row-${i + 1}`, text: r["output"]! }));
  }
  const rows = await parquetReadObjects({ file: await asyncBufferFromFile(file) });
  assert.deepEqual(
    rows.map((r) => r["label"]),
    rows.map((_, i) => `l${i}`),
    "the input's columns are carried through",
  );
  return rows.map((r, i) => ({ id: `row-${i + 1}`, text: String(r["output"]) }));
}

describe("batch runner", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-batch-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  for (const format of ["jsonl", "csv", "parquet"] as const) {
    it(`${format}: writes every result in input order although they finish out of order`, async () => {
      const inputs = writeInputs(dir);
      const output = path.join(dir, `out.${format}`);
      const files = openBatchFiles(format, inputs[format], output);
      const endpoint = fakeEndpoint();
      const summary = await runBatch({ ...files, execute: endpoint.execute, window: 8 });
      assert.equal(summary.done, PROMPTS.length);
      assert.equal(summary.succeeded, PROMPTS.length);
      assert.equal(summary.interrupted, false);
      assert.notDeepEqual(endpoint.served, [...endpoint.served].sort(), "completion order was shuffled");
      const got = await outputs(format, output);
      assert.deepEqual(
        got.map((g) => g.text),
        PROMPTS.map((p) => [...p].reverse().join("")),
      );
      assert.equal(existsSync(`${output}.journal.jsonl`), false);
    });

    it(`${format}: an interrupted run resumes without running a finished request again`, async () => {
      const inputs = writeInputs(dir);
      const output = path.join(dir, `out.${format}`);
      const first = fakeEndpoint();
      const stop = new AbortController();
      const summary = await runBatch({
        ...openBatchFiles(format, inputs[format], output),
        execute: first.execute,
        window: 8,
        signal: stop.signal,
        onProgress: (p) => {
          if (p.done >= 25) stop.abort();
        },
      });
      assert.equal(summary.interrupted, true);
      const writtenFirst = summary.done;
      assert.ok(writtenFirst >= 25 && writtenFirst < PROMPTS.length, `${writtenFirst} written`);
      const second = fakeEndpoint();
      const resumed = await runBatch({
        ...openBatchFiles(format, inputs[format], output),
        execute: second.execute,
        window: 8,
      });
      assert.equal(resumed.resumed, writtenFirst);
      assert.equal(second.served.length, PROMPTS.length - writtenFirst, "only the rest ran");
      assert.ok(!second.served.some((id) => Number(id.slice(4)) <= writtenFirst));
      const got = await outputs(format, output);
      assert.deepEqual(
        got.map((g) => g.text),
        PROMPTS.map((p) => [...p].reverse().join("")),
      );
    });
  }

  it("jsonl: a line torn by a crash is cut and run again", async () => {
    const { jsonl } = writeInputs(dir);
    const output = path.join(dir, "out.jsonl");
    const full = readFileSync(jsonl, "utf8").split("\n");
    writeFileSync(path.join(dir, "head.jsonl"), full.slice(0, 10).join("\n"));
    await runBatch({
      ...openBatchFiles("jsonl", path.join(dir, "head.jsonl"), output),
      execute: fakeEndpoint().execute,
      window: 4,
    });
    appendFileSync(output, '{"id":"batch_req_x","custom_id":"row-11","resp');
    const endpoint = fakeEndpoint();
    await runBatch({ ...openBatchFiles("jsonl", jsonl, output), execute: endpoint.execute, window: 4 });
    assert.equal(endpoint.served.length, PROMPTS.length - 10);
    assert.equal((await outputs("jsonl", output)).length, PROMPTS.length);
  });

  it("jsonl: bad lines become error records in place, and bad bodies the endpoint's 400", async () => {
    const input = path.join(dir, "bad.jsonl");
    const line = (id: string, extra: object = {}) =>
      JSON.stringify({
        custom_id: id,
        method: "POST",
        url: "/v1/completions",
        body: { prompt: "ab" },
        ...extra,
      });
    writeFileSync(
      input,
      [
        line("a"),
        "{not json",
        line("c", { url: "/v1/embeddings" }),
        line("d", { body: { prompt: "x", temperature: "hot" } }),
        "",
        line("e"),
      ].join("\n"),
    );
    const output = path.join(dir, "bad-out.jsonl");
    const summary = await runBatch({
      ...openBatchFiles("jsonl", input, output),
      execute: fakeEndpoint().execute,
      window: 4,
    });
    assert.deepEqual([summary.succeeded, summary.failed], [2, 3]);
    const results = readFileSync(output, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as BatchResult);
    assert.deepEqual(
      results.map((r) => r.custom_id),
      ["a", "line-2", "c", "d", "e"],
    );
    assert.equal(results[1]!.error?.code, "invalid_json");
    assert.match(results[2]!.error?.message ?? "", /url: must be one of/);
    assert.equal(results[3]!.response?.status_code, 400);
    assert.equal(results[3]!.error, null);
  });

  it("refuses to resume into an output written for another input", async () => {
    const { jsonl } = writeInputs(dir);
    const output = path.join(dir, "out.jsonl");
    writeFileSync(
      output,
      `${JSON.stringify({ id: "x", custom_id: "other", response: null, error: null })}\n`,
    );
    await assert.rejects(
      runBatch({ ...openBatchFiles("jsonl", jsonl, output), execute: fakeEndpoint().execute, window: 4 }),
      /custom_id "other" but the input's request 1 is "row-1"/,
    );
  });

  it("csv: a row without prompt or messages is an error row; other columns are carried through", async () => {
    const input = path.join(dir, "rows.csv");
    writeFileSync(
      input,
      stringify([
        ["prompt", "messages", "id"],
        ["hi", "", "1"],
        ["", "", "2"],
        ["", "[oops", "3"],
      ]),
    );
    const output = path.join(dir, "rows-out.csv");
    await runBatch({ ...openBatchFiles("csv", input, output), execute: fakeEndpoint().execute, window: 2 });
    const { parse } = await import("csv-parse/sync");
    const rows = parse(readFileSync(output), { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      rows.map((r) => [r["id"], r["output"], r["error"]]),
      [
        ["1", "ih", ""],
        ["2", "", "row 2: prompt: empty (set prompt or messages)"],
        ["3", "", rows[2]!["error"]],
      ],
    );
    assert.match(rows[2]!["error"]!, /^row 3: messages: not JSON/);
  });
});
