// Results written as OpenAI writes a batch's output: one JSON object per line, in input order. The
// file is its own journal: a re-run reads back the custom_ids it holds (after cutting a torn last
// line) and appends the rest.
import { createReadStream, existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { Code, TesseraError } from "../kernel/errors.ts";
import { Appender, cutTornTail } from "./append-file.ts";
import type { BatchSink, ResumedResult } from "./batch-runner.ts";
import type { BatchResult } from "./batch-types.ts";

export class JsonlSink implements BatchSink {
  readonly #file: string;
  readonly #out: Appender;

  constructor(file: string) {
    this.#file = file;
    this.#out = new Appender(file);
  }

  async *resumed(): AsyncIterable<ResumedResult> {
    if ((await cutTornTail(this.#file)) === 0) return;
    yield* readResults(this.#file);
  }

  write(results: readonly BatchResult[]): Promise<void> {
    return this.#out.append(results.map((r) => `${JSON.stringify(r)}\n`).join(""));
  }

  close(): Promise<void> {
    return this.#out.close();
  }
}

/** The results of an output file, in order. */
export async function* readResults(file: string): AsyncIterable<ResumedResult & { result: BatchResult }> {
  if (!existsSync(file)) return;
  let lineNumber = 0;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    lineNumber++;
    if (line === "") continue;
    let result: BatchResult;
    try {
      result = JSON.parse(line) as BatchResult;
    } catch {
      throw new TesseraError(
        Code.FAILED_PRECONDITION,
        `${file}:${lineNumber} is not a result line (not JSON)`,
      );
    }
    if (typeof result?.custom_id !== "string")
      throw new TesseraError(Code.FAILED_PRECONDITION, `${file}:${lineNumber} has no custom_id`);
    yield { customId: result.custom_id, succeeded: result.response?.status_code === 200, result };
  }
}
