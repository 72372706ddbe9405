// `tessera batch`: runs a file of requests (OpenAI batch JSONL, CSV or Parquet) and writes their
// results beside them in the same format, on an engine in this process (--model: no gRPC, no router)
// or through a router (--url). Progress goes to stderr (a bar on a terminal, log lines otherwise), the
// summary as one JSON object to stdout. The first Ctrl-C (SIGINT) or SIGTERM stops the batch cleanly:
// what finished is written, and running the same command again resumes (exit code 130 says it was
// interrupted); a second one kills at once.
import { existsSync } from "node:fs";
import { Command, Option } from "commander";
import type { BatchExecutor } from "../batch/batch-types.ts";
import { createLogger } from "../kernel/log.ts";
import { positiveIntegerFlag } from "./flags.ts";

interface BatchFlags {
  input: string;
  output: string;
  format?: string;
  model?: string;
  url?: string;
  apiKey?: string;
  window?: number;
  threads?: number;
  maxNumSeqs?: number;
  maxNumBatchedTokens?: number;
  progressIntervalMs: number;
}

export const EXIT_INTERRUPTED = 130;

export function batchCommand(): Command {
  return new Command("batch")
    .summary("Run a file of requests offline (JSONL, CSV, Parquet) and write the results")
    .description(
      "Run a file of requests and write one result per request, in input order, in the input's format: " +
        "OpenAI batch JSONL ({custom_id, method, url, body} -> {id, custom_id, response, error}), or CSV / " +
        "Parquet with a prompt or messages (JSON) column and sampling columns (results as added columns). " +
        "Running it again with the same --output resumes where it stopped.",
    )
    .requiredOption("--input <file>", "the requests")
    .requiredOption("--output <file>", "the results (resumed when it exists)")
    .addOption(
      new Option("--format <format>", "input and output format (default: the input's extension)").choices([
        "jsonl",
        "csv",
        "parquet",
      ]),
    )
    .addOption(
      new Option("--model <dir>", "run on an engine in this process, loading this checkpoint").conflicts(
        "url",
      ),
    )
    .option("--url <url>", "send the requests to this router (its OpenAI base URL) instead")
    .addOption(new Option("--api-key <key>", "API key for --url").env("TESSERA_API_KEY"))
    .option(
      "--window <n>",
      "requests in flight at most (default: 512 in process, 64 with --url)",
      positiveIntegerFlag,
    )
    .option(
      "--threads <n>",
      "engine threads over all model replicas (default: one per core; 1 runs one replica)",
      positiveIntegerFlag,
    )
    .option(
      "--max-num-seqs <n>",
      "requests each engine replica runs at once (default 128)",
      positiveIntegerFlag,
    )
    .option(
      "--max-num-batched-tokens <n>",
      "tokens per engine step; longer prompts are chunked (default 1024)",
      positiveIntegerFlag,
    )
    .option(
      "--progress-interval-ms <ms>",
      "log a progress line this often when stderr is not a terminal",
      positiveIntegerFlag,
      10_000,
    )
    .action(async (flags: BatchFlags, command: Command) => {
      if ((flags.model === undefined) === (flags.url === undefined))
        command.error("error: one of --model or --url is required", { exitCode: 2 });
      // Loaded here, not with the command line: every `tessera` process (a router too) would
      // otherwise carry the parquet, CSV and progress-bar modules in its heap.
      const { batchFormat } = await import("../batch/batch-format.ts");
      const format = batchFormat(flags.input, flags.format);
      if (format.error) command.error(`error: ${format.error.message}`, { exitCode: 2 });
      if (!existsSync(flags.input))
        command.error(`error: --input: ${flags.input} does not exist`, { exitCode: 2 });
      await batch(flags, format.value!);
    });
}

async function batch(flags: BatchFlags, format: "jsonl" | "csv" | "parquet"): Promise<void> {
  const { openBatchFiles } = await import("../batch/batch-format.ts");
  const { runBatch } = await import("../batch/batch-runner.ts");
  const { progressView } = await import("./batch-progress.ts");
  const files = openBatchFiles(format, flags.input, flags.output);
  const total = await files.count();
  const { execute, close } = await executor(flags);
  const stop = new AbortController();
  const onSignal = () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.stderr.write("\nstopping: writing what finished (again to kill at once)\n");
    stop.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const view = progressView(total, process.stderr, flags.progressIntervalMs);
  try {
    const window = flags.window ?? (flags.url === undefined ? 512 : 64);
    const started = performance.now();
    const summary = await runBatch({
      ...files,
      execute,
      window,
      signal: stop.signal,
      onProgress: view.update,
    });
    view.finish(summary);
    process.stdout.write(
      `${JSON.stringify({ total, ...summary, executed: summary.done - summary.resumed, seconds: (performance.now() - started) / 1000 })}\n`,
    );
    if (summary.interrupted) process.exitCode = EXIT_INTERRUPTED;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await close();
  }
}

async function executor(flags: BatchFlags): Promise<{ execute: BatchExecutor; close: () => Promise<void> }> {
  if (flags.url !== undefined) {
    const { httpExecutor } = await import("./batch-http-executor.ts");
    return { execute: httpExecutor(flags.url, flags.apiKey), close: async () => {} };
  }
  const { loadOfflineEngine } = await import("../worker/index.ts");
  const offlineEngine = await loadOfflineEngine();
  const { engineExecutor } = await import("./batch-engine-executor.ts");
  const { engine, samplingDefaults } = await offlineEngine(flags.model!, {
    log: createLogger("batch"),
    threads: flags.threads,
    engine: {
      ...(flags.maxNumSeqs !== undefined && { maxNumSeqs: flags.maxNumSeqs }),
      ...(flags.maxNumBatchedTokens !== undefined && { maxNumBatchedTokens: flags.maxNumBatchedTokens }),
    },
  });
  return { execute: engineExecutor(engine, samplingDefaults), close: () => engine.close() };
}
