// The three batch file formats, chosen by the input's extension or named: OpenAI's batch JSONL, CSV and
// Parquet. The output is in the input's format.
import path from "node:path";
import { type Result, TesseraError } from "../kernel/errors.ts";
import type { BatchSink } from "./batch-runner.ts";
import type { BatchItem } from "./batch-types.ts";
import { CsvSink, countCsvRequests, csvItems } from "./csv-table.ts";
import { countJsonlRequests, jsonlItems } from "./jsonl-input.ts";
import { JsonlSink } from "./jsonl-sink.ts";
import { countParquetRequests, ParquetSink, parquetItems } from "./parquet-table.ts";

export const BATCH_FORMATS = ["jsonl", "csv", "parquet"] as const;
export type BatchFormat = (typeof BATCH_FORMATS)[number];

const EXTENSIONS: Record<string, BatchFormat> = {
  ".jsonl": "jsonl",
  ".ndjson": "jsonl",
  ".csv": "csv",
  ".parquet": "parquet",
  ".pq": "parquet",
};

/** The format `explicit` names, else the one the input's extension says. */
export function batchFormat(input: string, explicit: string | undefined): Result<BatchFormat> {
  if (explicit !== undefined) {
    if ((BATCH_FORMATS as readonly string[]).includes(explicit)) return { value: explicit as BatchFormat };
    return { error: TesseraError.invalidArgument("--format", `must be one of ${BATCH_FORMATS.join(", ")}`) };
  }
  const format = EXTENSIONS[path.extname(input).toLowerCase()];
  if (format) return { value: format };
  return {
    error: TesseraError.invalidArgument(
      "--format",
      `cannot tell the format of "${input}" from its extension (.jsonl, .csv, .parquet): name it`,
    ),
  };
}

export interface BatchFiles {
  items: AsyncIterable<BatchItem>;
  /** Requests in the input (a first pass over it for JSONL and CSV). */
  count(): Promise<number>;
  sink: BatchSink;
}

export function openBatchFiles(format: BatchFormat, input: string, output: string): BatchFiles {
  switch (format) {
    case "jsonl":
      return {
        items: jsonlItems(input),
        count: () => countJsonlRequests(input),
        sink: new JsonlSink(output),
      };
    case "csv":
      return {
        items: csvItems(input),
        count: () => countCsvRequests(input),
        sink: new CsvSink(input, output),
      };
    case "parquet":
      return {
        items: parquetItems(input),
        count: () => countParquetRequests(input),
        sink: new ParquetSink(input, output),
      };
  }
}
