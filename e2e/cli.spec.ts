// The `tessera` CLI as a user runs it: generate in-process (streamed and --json), flag errors, exit codes.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { runTessera } from "../services/cli/child-process.ts";
import { tinyCheckpoint } from "./checkpoint.ts";

interface GenerateJson {
  prompt_ids: number[];
  output_ids: number[];
  text: string;
  finish_reason: string;
}

describe("tessera CLI (e2e)", () => {
  let modelDir: string;
  const generateJson = async (args: string[]): Promise<GenerateJson> => {
    const run = await runTessera(["generate", "--model", modelDir, "--json", ...args]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.trim().split("\n");
    assert.equal(lines.length, 1, `exactly one JSON object on stdout, got:\n${run.stdout}`);
    return JSON.parse(lines[0]!) as GenerateJson;
  };

  before(async () => {
    modelDir = await tinyCheckpoint();
  });

  it("runs from the bin launcher and prints help", () => {
    const launcher = path.resolve(import.meta.dirname, "../services/cli/bin/tessera.js");
    const run = spawnSync(process.execPath, [launcher, "--help"], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    for (const command of ["model", "generate", "serve"])
      assert.match(run.stdout, new RegExp(`\\b${command}\\b`));
  });

  it("generate --json prints one object with prompt_ids, output_ids, text and finish_reason", async () => {
    const result = await generateJson(["--prompt", "Hello", "--max-tokens", "12", "--ignore-eos"]);
    assert.deepEqual(Object.keys(result).sort(), ["finish_reason", "output_ids", "prompt_ids", "text"]);
    assert.ok(result.prompt_ids.length > 0 && result.prompt_ids.every(Number.isInteger));
    assert.equal(result.output_ids.length, 12);
    assert.equal(result.finish_reason, "length");
    assert.equal(typeof result.text, "string");
  });

  it("streams the same text without --json, and --prompt-ids continues the same prompt", async () => {
    const byText = await generateJson(["--prompt", "Hello there", "--max-tokens", "10", "--ignore-eos"]);
    const ids = byText.prompt_ids.join(",");
    const byIds = await generateJson(["--prompt-ids", ids, "--max-tokens", "10", "--ignore-eos"]);
    assert.deepEqual(byIds.prompt_ids, byText.prompt_ids);
    assert.deepEqual(byIds.output_ids, byText.output_ids);
    const streamed = await runTessera([
      "generate",
      "--model",
      modelDir,
      "--prompt-ids",
      ids,
      "--max-tokens",
      "10",
      "--ignore-eos",
    ]);
    assert.equal(streamed.code, 0, streamed.stderr);
    assert.equal(streamed.stdout, `${byText.text}\n`);
  });

  it("gives the same sample for the same seed", async () => {
    const args = [
      "--prompt",
      "Roll the dice",
      "--max-tokens",
      "10",
      "--temperature",
      "1",
      "--top-k",
      "50",
      "--seed",
      "42",
      "--ignore-eos",
    ];
    assert.deepEqual((await generateJson(args)).output_ids, (await generateJson(args)).output_ids);
  });

  it("stops before the first --stop string and leaves it out", async () => {
    const args = ["--prompt", "Stop", "--max-tokens", "32", "--ignore-eos"];
    const free = await generateJson(args);
    const stop = /[A-Za-z]{2}/.exec(free.text.slice(free.text.length >> 1))?.[0];
    assert.ok(stop, `no letters to stop on in ${JSON.stringify(free.text)}`);
    const stopped = await generateJson([...args, "--stop", "never-generated", stop]);
    assert.equal(stopped.finish_reason, "stop_string");
    assert.equal(stopped.text, free.text.slice(0, free.text.indexOf(stop)));
  });

  const badFlags: [string, string[], RegExp][] = [
    ["a word for --max-tokens", ["--prompt", "a", "--max-tokens", "many"], /--max-tokens/],
    ["--max-tokens 0", ["--prompt", "a", "--max-tokens", "0"], /--max-tokens/],
    ["a negative --temperature", ["--prompt", "a", "--temperature", "-1"], /--temperature/],
    ["--top-p above 1", ["--prompt", "a", "--top-p", "1.5"], /--top-p/],
    [
      "--min-tokens above --max-tokens",
      ["--prompt", "a", "--max-tokens", "4", "--min-tokens", "5"],
      /--min-tokens/,
    ],
    ["a word in --prompt-ids", ["--prompt-ids", "1,x,3"], /--prompt-ids/],
    ["an id outside the vocabulary", ["--prompt-ids", "1,99999999"], /--prompt-ids/],
    ["no prompt", [], /--prompt/],
    ["both prompts", ["--prompt", "a", "--prompt-ids", "1"], /--prompt/],
    ["an unknown flag", ["--prompt", "a", "--tempreature", "1"], /--tempreature/],
  ];
  for (const [name, args, flag] of badFlags) {
    it(`generate exits 2 with a one-line error for ${name}`, async () => {
      const run = await runTessera(["generate", "--model", modelDir, ...args]);
      assert.equal(run.code, 2, run.stderr);
      const firstLine = run.stderr.trim().split("\n")[0] ?? "";
      assert.match(firstLine, /^error: /);
      assert.match(firstLine, flag);
    });
  }

  it("model create and serve exit 2 for bad flags", async () => {
    const runs = await Promise.all([
      runTessera([
        "model",
        "create",
        "--arch",
        "gpt2",
        "--preset",
        "tiny",
        "--seed",
        "1",
        "--out",
        "/tmp/never",
      ]),
      runTessera([
        "model",
        "create",
        "--arch",
        "llama",
        "--preset",
        "huge",
        "--seed",
        "1",
        "--out",
        "/tmp/never",
      ]),
      runTessera(["model", "create", "--arch", "llama", "--preset", "tiny", "--seed", "1"]),
      runTessera(["serve", "--model", modelDir, "--port", "70000"]),
      runTessera(["serve", "--model", modelDir, "--port", "9000", "--metrics-port", "9000"]),
      runTessera(["serve", "--model", modelDir, "--served-model-name", ""]),
    ]);
    const flags = ["--arch", "--preset", "--out", "--port", "--metrics-port", "--served-model-name"];
    runs.forEach((run, i) => {
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, new RegExp(`^error: .*${flags[i]}`));
    });
  });

  it("exits 1 with a clear error when the model folder is missing", async () => {
    const missing = "/tmp/tessera-no-such-model";
    for (const args of [
      ["generate", "--model", missing, "--prompt", "a"],
      ["serve", "--model", missing, "--port", "0"],
    ]) {
      const run = await runTessera(args);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, new RegExp(`^tessera ${args[0]}: .*${missing}`, "m"));
    }
  });
});
