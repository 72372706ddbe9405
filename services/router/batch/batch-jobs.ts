// The batches a router runs: created from an uploaded JSONL file, run line by line through the
// router's request path (batch-executor.ts) with at most `maxInFlight` lines in flight, results
// journalled in input order (services/batch), split at the end into OpenAI's output file (the lines
// answered 200) and error file (the rest). A router that stops leaves its running batches
// in_progress; the next one to open the same folder resumes them from their journals, so no finished
// line runs twice. Cancelling stops a batch as Ctrl-C stops `tessera batch`: what finished is kept and
// becomes the output and error files.

import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { type BatchProgress, runBatch } from "../../batch/batch-runner.ts";
import type { BatchExecutor, BatchItem } from "../../batch/batch-types.ts";
import { countJsonlRequests, jsonlItems } from "../../batch/jsonl-input.ts";
import { JsonlSink, readResults } from "../../batch/jsonl-sink.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { type BatchObject, type BatchStore, newId, nowSeconds, type StoredBatch } from "./batch-store.ts";

export const BATCH_API_ENDPOINTS = ["/v1/completions", "/v1/chat/completions"];

export interface CreateBatch {
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata?: Record<string, string> | null | undefined;
}

interface Running {
  stored: StoredBatch;
  stop: AbortController;
  finished: Promise<void>;
}

/** How often a running batch's counts are saved (they are also saved when it ends). */
const SAVE_EVERY_MS = 1_000;

const CANCEL = "cancel";

export class BatchJobs {
  readonly #store: BatchStore;
  readonly #executor: (apiKey: string | undefined) => BatchExecutor;
  readonly #maxInFlight: number;
  readonly #log: Logger;
  readonly #running = new Map<string, Running>();

  constructor(
    store: BatchStore,
    executor: (apiKey: string | undefined) => BatchExecutor,
    maxInFlight: number,
    log: Logger,
  ) {
    this.#store = store;
    this.#executor = executor;
    this.#maxInFlight = maxInFlight;
    this.#log = log;
  }

  get store(): BatchStore {
    return this.#store;
  }

  /** Picks up the batches a previous router left unfinished. */
  async resume(): Promise<void> {
    for (const stored of await this.#store.batches()) {
      const { status } = stored.batch;
      if (
        status === "validating" ||
        status === "in_progress" ||
        status === "finalizing" ||
        status === "cancelling"
      ) {
        this.#log.info(
          { batch: stored.batch.id, status, done: stored.batch.request_counts },
          "resuming batch",
        );
        this.#start(stored);
      }
    }
  }

  async create(body: CreateBatch, apiKey: string | undefined): Promise<BatchObject> {
    if (!BATCH_API_ENDPOINTS.includes(body.endpoint))
      throw TesseraError.invalidArgument("endpoint", `must be one of ${BATCH_API_ENDPOINTS.join(", ")}`);
    if (body.completion_window !== "24h")
      throw TesseraError.invalidArgument("completion_window", 'must be "24h"');
    const input = await this.#store.file(body.input_file_id).catch(() => {
      throw TesseraError.invalidArgument("input_file_id", `no file "${body.input_file_id}"`);
    });
    if (input.purpose !== "batch")
      throw TesseraError.invalidArgument(
        "input_file_id",
        `file "${input.id}" has purpose "${input.purpose}", not "batch"`,
      );
    const total = await countJsonlRequests(this.#store.filePath(input.id));
    const created = nowSeconds();
    const batch: BatchObject = {
      id: newId("batch"),
      object: "batch",
      endpoint: body.endpoint,
      errors: null,
      input_file_id: input.id,
      completion_window: body.completion_window,
      status: "validating",
      output_file_id: null,
      error_file_id: null,
      created_at: created,
      in_progress_at: null,
      expires_at: created + 24 * 3600,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total, completed: 0, failed: 0 },
      metadata: body.metadata ?? null,
    };
    const stored = { batch, apiKey };
    await this.#store.saveBatch(stored);
    this.#start(stored);
    return batch;
  }

  /** A running batch's counts as they are now (the stored ones lag by up to SAVE_EVERY_MS). */
  async get(id: string): Promise<BatchObject> {
    return this.#running.get(id)?.stored.batch ?? (await this.#store.batch(id)).batch;
  }

  async list(limit: number, after: string | undefined): Promise<{ data: BatchObject[]; hasMore: boolean }> {
    const all = (await this.#store.batches()).map(
      (s) => this.#running.get(s.batch.id)?.stored.batch ?? s.batch,
    );
    const from = after === undefined ? 0 : all.findIndex((b) => b.id === after) + 1;
    const data = all.slice(from, from + limit);
    return { data, hasMore: from + limit < all.length };
  }

  async cancel(id: string): Promise<BatchObject> {
    const running = this.#running.get(id);
    const stored = running?.stored ?? (await this.#store.batch(id));
    const { status } = stored.batch;
    if (status === "cancelling" || status === "cancelled") return stored.batch;
    if (status !== "validating" && status !== "in_progress")
      throw new TesseraError(Code.FAILED_PRECONDITION, `batch "${id}" is ${status}: it cannot be cancelled`);
    stored.batch.status = "cancelling";
    stored.batch.cancelling_at = nowSeconds();
    await this.#store.saveBatch(stored);
    if (running) running.stop.abort(CANCEL);
    else this.#start(stored);
    return stored.batch;
  }

  /** Stops every running batch without finishing it (a later router resumes them). */
  async stop(): Promise<void> {
    const all = [...this.#running.values()];
    for (const r of all) r.stop.abort("shutdown");
    await Promise.all(all.map((r) => r.finished));
  }

  #start(stored: StoredBatch): void {
    const stop = new AbortController();
    if (stored.batch.status === "cancelling") stop.abort(CANCEL);
    const finished = this.#run(stored, stop.signal)
      .catch(async (err: unknown) => {
        const error = TesseraError.from(err);
        this.#log.error({ batch: stored.batch.id, err: error.message }, "batch failed");
        stored.batch.status = "failed";
        stored.batch.failed_at = nowSeconds();
        stored.batch.errors = {
          object: "list",
          data: [{ code: "batch_failed", message: error.message, line: null, param: null }],
        };
        await this.#store.saveBatch(stored).catch(() => {});
      })
      .finally(() => this.#running.delete(stored.batch.id));
    this.#running.set(stored.batch.id, { stored, stop, finished });
  }

  async #run(stored: StoredBatch, signal: AbortSignal): Promise<void> {
    const { batch } = stored;
    if (batch.status === "validating") {
      batch.status = "in_progress";
      batch.in_progress_at = nowSeconds();
      await this.#store.saveBatch(stored);
    }
    if (batch.status === "in_progress" || batch.status === "cancelling") {
      let saved = 0;
      const onProgress = (p: Readonly<BatchProgress>) => {
        batch.request_counts.completed = p.succeeded;
        batch.request_counts.failed = p.failed;
        if (Date.now() - saved < SAVE_EVERY_MS) return;
        saved = Date.now();
        void this.#store.saveBatch(stored);
      };
      const summary = await runBatch({
        items: onEndpoint(jsonlItems(this.#store.filePath(batch.input_file_id)), batch.endpoint),
        sink: new JsonlSink(this.#store.resultsPath(batch.id)),
        execute: this.#executor(stored.apiKey),
        window: this.#maxInFlight,
        signal,
        finishInFlight: true,
        onProgress,
      });
      onProgress(summary);
      if (summary.interrupted && signal.reason !== CANCEL) {
        await this.#store.saveBatch(stored);
        return;
      }
      if (!summary.interrupted) {
        batch.status = "finalizing";
        batch.finalizing_at = nowSeconds();
      }
      await this.#store.saveBatch(stored);
    }
    await this.#finalize(stored);
  }

  /** The output file (lines answered 200) and the error file (the rest), then the final status. */
  async #finalize(stored: StoredBatch): Promise<void> {
    const { batch } = stored;
    const outputId = newId("file");
    const errorId = newId("file");
    const output = createWriteStream(this.#store.filePath(outputId));
    const errors = createWriteStream(this.#store.filePath(errorId));
    let succeeded = 0;
    let failed = 0;
    for await (const { result, succeeded: ok } of readResults(this.#store.resultsPath(batch.id))) {
      const stream = ok ? output : errors;
      if (ok) succeeded++;
      else failed++;
      if (!stream.write(`${JSON.stringify(result)}\n`)) await once(stream, "drain");
    }
    await Promise.all([closeStream(output), closeStream(errors)]);
    batch.output_file_id = (await this.#store.describeWritten(outputId, `${batch.id}_output.jsonl`)).id;
    batch.error_file_id = (await this.#store.describeWritten(errorId, `${batch.id}_error.jsonl`)).id;
    batch.request_counts.completed = succeeded;
    batch.request_counts.failed = failed;
    if (batch.status === "cancelling") {
      batch.status = "cancelled";
      batch.cancelled_at = nowSeconds();
    } else {
      batch.status = "completed";
      batch.completed_at = nowSeconds();
    }
    await this.#store.saveBatch(stored);
    this.#log.info({ batch: batch.id, status: batch.status, counts: batch.request_counts }, "batch ended");
  }
}

/** A line for another endpoint than the batch's is an error record (OpenAI: one endpoint per batch). */
async function* onEndpoint(items: AsyncIterable<BatchItem>, endpoint: string): AsyncIterable<BatchItem> {
  for await (const item of items) {
    if (item.type === "request" && item.request.url !== endpoint) {
      const message = `url: ${item.request.url} differs from the batch's endpoint ${endpoint}`;
      yield { type: "invalid", customId: item.request.customId, error: { code: "invalid_request", message } };
    } else yield item;
  }
}

function closeStream(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.once("error", reject);
    stream.end(() => resolve());
  });
}
