// `tessera batch` on a tiny model in its own process: the same requests (3,000 by default; 10,000 with
// TESSERA_BATCH_E2E_LINES=10000) as OpenAI batch JSONL,
// CSV and Parquet give the same greedy results; a run killed (SIGKILL) or interrupted (SIGINT) and run
// again finishes without running a written result again: the second run's count of requests it ran is
// the input less what the first left in the output, and no custom_id appears twice.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { asyncBufferFromFile, parquetReadObjects } from "hyparquet";
import { parquetWriteFile } from "hyparquet-writer";
import { runTessera } from "../../services/cli/child-process.ts";
import { tinyCheckpoint } from "../checkpoint.ts";

const main = path.resolve(import.meta.dirname, "../../services/cli/main.ts");
/** 10,000 is the figure (about a minute on 2 loaded cores); the default suite runs 3,000. */
const LINES = Number(process.env["TESSERA_BATCH_E2E_LINES"] ?? 3_000);
const WORDS = "the cat sat on a mat and then went home to sleep under warm sun light".split(" ");

/** Deterministic prompts of 3..22 words, many sharing their first words (prefix caching at work). */
function prompts(n: number): string[] {
  return Array.from({ length: n }, (_, i) =>
    Array.from({ length: 3 + (i % 20) }, (_, j) => WORDS[(i * 7 + j * 3 + (j > 2 ? i : 0)) % WORDS.length])
      .concat(String(i))
      .join(" "),
  );
}

interface Summary {
  total: number;
  done: number;
  succeeded: number;
  failed: number;
  resumed: number;
  executed: number;
  interrupted: boolean;
}

function jsonlTexts(file: string): { id: string; text: string }[] {
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .map((r) => ({ id: r.custom_id, text: r.response.body.choices[0].text }));
}

describe("tessera batch (e2e)", function () {
  this.timeout(300_000);
  let model: string;
  let dir: string;
  const all = prompts(LINES);

  before(async () => {
    model = await tinyCheckpoint();
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-cli-batch-"));
    writeFileSync(
      path.join(dir, "in.jsonl"),
      all
        .map((prompt, i) =>
          JSON.stringify({
            custom_id: `row-${i + 1}`,
            method: "POST",
            url: "/v1/completions",
            body: { prompt, max_tokens: 5, temperature: 0 },
          }),
        )
        .join("\n"),
    );
    writeFileSync(
      path.join(dir, "in.csv"),
      stringify([["prompt", "max_tokens", "temperature"], ...all.map((p) => [p, 5, 0])]),
    );
    parquetWriteFile({
      filename: path.join(dir, "in.parquet"),
      columnData: [
        { name: "prompt", data: all, type: "STRING" },
        { name: "max_tokens", data: all.map(() => 5), type: "INT32" },
        { name: "temperature", data: all.map(() => 0), type: "DOUBLE" },
      ],
    });
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  const batch = async (input: string, output: string) => {
    const run = await runTessera(["batch", "--model", model, "--input", input, "--output", output]);
    assert.equal(run.code, 0, run.stderr);
    return JSON.parse(run.stdout) as Summary;
  };

  it(`gives the same results for the same ${LINES} requests as JSONL, CSV and Parquet`, async () => {
    const jsonl = await batch(path.join(dir, "in.jsonl"), path.join(dir, "out.jsonl"));
    assert.deepEqual([jsonl.done, jsonl.executed, jsonl.interrupted], [LINES, LINES, false]);
    const texts = jsonlTexts(path.join(dir, "out.jsonl"));
    assert.deepEqual(
      texts.map((t) => t.id),
      all.map((_, i) => `row-${i + 1}`),
    );
    assert.ok(new Set(texts.map((t) => t.text)).size > LINES / 10, "the outputs differ by prompt");
    await batch(path.join(dir, "in.csv"), path.join(dir, "out.csv"));
    const csv = parse(readFileSync(path.join(dir, "out.csv")), { columns: true }) as Record<string, string>[];
    assert.deepEqual(
      csv.map((r) => r["output"]),
      texts.map((t) => t.text),
    );
    await batch(path.join(dir, "in.parquet"), path.join(dir, "out.parquet"));
    const rows = await parquetReadObjects({ file: await asyncBufferFromFile(path.join(dir, "out.parquet")) });
    assert.deepEqual(
      rows.map((r) => r["output"]),
      texts.map((t) => t.text),
    );
    assert.equal(existsSync(path.join(dir, "out.parquet.journal.jsonl")), false);
  });

  it("gives the same greedy results on one replica of one thread (--threads 1) as on its default replicas", async () => {
    const many = path.join(dir, "out-replicas.jsonl");
    const one = path.join(dir, "out-one.jsonl");
    await batch(path.join(dir, "in.jsonl"), many);
    const run = await runTessera([
      "batch",
      "--model",
      model,
      "--threads",
      "1",
      "--input",
      path.join(dir, "in.jsonl"),
      "--output",
      one,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(jsonlTexts(one), jsonlTexts(many));
  });

  it("refuses bad flags with exit code 2 naming the flag", async () => {
    const input = path.join(dir, "in.jsonl");
    const neither = await runTessera(["batch", "--input", input, "--output", path.join(dir, "x.jsonl")]);
    assert.equal(neither.code, 2);
    assert.match(neither.stderr, /one of --model or --url is required/);
    const unknown = await runTessera([
      "batch",
      "--model",
      model,
      "--input",
      path.join(dir, "in.txt"),
      "--output",
      "x",
    ]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--format: cannot tell the format of/);
    const missing = await runTessera([
      "batch",
      "--model",
      model,
      "--input",
      path.join(dir, "none.csv"),
      "--output",
      "x",
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--input: .*none.csv does not exist/);
  });

  it("answers chat lines with the chat template, and bad bodies with the router's 400 naming the field", async () => {
    const input = path.join(dir, "mixed.jsonl");
    const line = (custom_id: string, url: string, body: object) =>
      JSON.stringify({ custom_id, method: "POST", url, body });
    writeFileSync(
      input,
      [
        line("chat", "/v1/chat/completions", {
          messages: [{ role: "user", content: "hello there" }],
          max_tokens: 4,
          temperature: 0,
        }),
        line("hot", "/v1/completions", { prompt: "x", temperature: "hot" }),
        line("unknown", "/v1/completions", { prompt: "x", use_beam_search: true }),
        line("model", "/v1/completions", { prompt: "x", model: "other" }),
        line("stream", "/v1/completions", { prompt: "x", stream: true }),
      ].join("\n"),
    );
    const output = path.join(dir, "mixed-out.jsonl");
    const summary = await batch(input, output);
    assert.deepEqual([summary.succeeded, summary.failed], [1, 4]);
    const results = readFileSync(output, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const chat = results[0].response.body;
    assert.equal(chat.object, "chat.completion");
    assert.equal(chat.usage.completion_tokens, 4);
    assert.equal(typeof chat.choices[0].message.content, "string");
    assert.deepEqual(
      results.slice(1).map((r) => [r.custom_id, r.response.status_code, r.response.body.error.param]),
      [
        ["hot", 400, "temperature"],
        ["unknown", 400, "use_beam_search"],
        ["model", 404, null],
        ["stream", 400, "stream"],
      ],
    );
  });

  for (const signal of ["SIGKILL", "SIGINT"] as const) {
    it(`resumes a run stopped by ${signal} without running a written request again`, async () => {
      const input = path.join(dir, "in.jsonl");
      const output = path.join(dir, `killed-${signal}.jsonl`);
      const child = spawn(
        process.execPath,
        [main, "batch", "--model", model, "--input", input, "--output", output, "--window", "64"],
        { stdio: ["ignore", "pipe", "ignore"] },
      );
      let stdout = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk));
      const exited = once(child, "close");
      while (!existsSync(output) || readFileSync(output).length < LINES * 20) await delay(20);
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      const kept = readFileSync(output, "utf8").split("\n").slice(0, -1).length;
      if (signal === "SIGINT") {
        assert.equal(code, 130);
        assert.equal((JSON.parse(stdout) as Summary).done, kept);
      }
      assert.ok(kept > 0 && kept < LINES, `${kept} results written before ${signal}`);
      const second = await batch(input, output);
      assert.equal(second.resumed, kept);
      assert.equal(second.executed, LINES - kept, "only the requests without a result ran again");
      const texts = jsonlTexts(output);
      assert.deepEqual(
        texts.map((t) => t.id),
        all.map((_, i) => `row-${i + 1}`),
      );
      assert.deepEqual(texts, jsonlTexts(path.join(dir, "out.jsonl")));
    });
  }
});
