// Parquet batches: each row is a request (table-request.ts); the output is the input's columns
// followed by the result columns. A Parquet file cannot be appended to (its footer comes last), so
// results go first to a sidecar journal (`<output>.journal.jsonl`, one line per finished row, in
// order), which is what a re-run resumes from; when a run ends, finished or interrupted, the Parquet
// output is written from the input and the journal (the rows done so far), streaming row groups, and
// a finished run removes the journal. A run killed outright (SIGKILL) leaves the journal and an older
// or missing output; the next run resumes from the journal and rewrites the output.
import { rename, rm } from "node:fs/promises";
import type { FileMetaData, SchemaElement } from "hyparquet";
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema } from "hyparquet";
import { fileWriter, ParquetWriter } from "hyparquet-writer";
import { Code, TesseraError } from "../kernel/errors.ts";
import { Appender, cutTornTail } from "./append-file.ts";
import type { BatchSink, ResumedResult } from "./batch-runner.ts";
import type { BatchItem, BatchResult } from "./batch-types.ts";
import { readLines } from "./read-lines.ts";
import { checkColumns, RESULT_COLUMNS, type ResultColumns, resultColumns, rowItem } from "./table-request.ts";

/** Rows read (and written) at a time: memory stays bounded by this, not by the file. */
const ROWS_PER_READ = 10_000;

type Row = Record<string, unknown>;

interface JournalLine extends ResultColumns {
  custom_id: string;
}

export async function* parquetItems(file: string): AsyncIterable<BatchItem> {
  let index = 0;
  for await (const row of parquetRows(file)) yield rowItem(row, index++);
}

export async function countParquetRequests(file: string): Promise<number> {
  const { metadata } = await openParquet(file);
  return Number(metadata.num_rows);
}

async function openParquet(file: string) {
  const buffer = await asyncBufferFromFile(file);
  const metadata = await parquetMetadataAsync(buffer);
  const columns = parquetSchema(metadata).children.map((c) => c.element.name);
  const problem = checkColumns(columns);
  if (problem) throw new TesseraError(Code.INVALID_ARGUMENT, `${file}: ${problem}`);
  const nested = parquetSchema(metadata).children.find((c) => c.children.length > 0);
  if (nested)
    throw new TesseraError(
      Code.INVALID_ARGUMENT,
      `${file}: column "${nested.element.name}" is nested; store messages as JSON text`,
    );
  return { buffer, metadata, columns };
}

/**
 * The rows in order, read a row group at a time (a slice of ROWS_PER_READ at a time within a large
 * one), so that each group's pages are decoded about once and memory stays bounded.
 */
async function* parquetRows(file: string): AsyncIterable<Row> {
  const { buffer, metadata } = await openParquet(file);
  let groupStart = 0;
  for (const group of metadata.row_groups) {
    const groupEnd = groupStart + Number(group.num_rows);
    for (let start = groupStart; start < groupEnd; start += ROWS_PER_READ) {
      const rowEnd = Math.min(groupEnd, start + ROWS_PER_READ);
      yield* await parquetReadObjects({ file: buffer, metadata, rowStart: start, rowEnd });
    }
    groupStart = groupEnd;
  }
}

export class ParquetSink implements BatchSink {
  readonly #input: string;
  readonly #output: string;
  readonly #journal: string;
  readonly #out: Appender;

  constructor(input: string, output: string) {
    this.#input = input;
    this.#output = output;
    this.#journal = `${output}.journal.jsonl`;
    this.#out = new Appender(this.#journal);
  }

  async *resumed(): AsyncIterable<ResumedResult> {
    if ((await cutTornTail(this.#journal)) === 0) return;
    for await (const line of readLines(this.#journal)) {
      const entry = JSON.parse(line) as JournalLine;
      yield { customId: entry.custom_id, succeeded: entry.error === null };
    }
  }

  write(results: readonly BatchResult[]): Promise<void> {
    const lines = results.map((r) => JSON.stringify({ custom_id: r.custom_id, ...resultColumns(r) }));
    return this.#out.append(`${lines.join("\n")}\n`);
  }

  /** Writes the Parquet output from the input and the journal; a finished run drops the journal. */
  async close(complete: boolean): Promise<void> {
    await this.#out.close();
    const { metadata, columns } = await openParquet(this.#input);
    const temporary = `${this.#output}.partial`;
    const writer = new ParquetWriter({
      writer: fileWriter(temporary),
      schema: outputSchema(metadata),
      createdBy: "tessera batch",
    });
    const rows = parquetRows(this.#input)[Symbol.asyncIterator]();
    let group: { row: Row; result: ResultColumns }[] = [];
    const flush = async () => {
      if (group.length === 0) return;
      await writer.write({ columnData: columnData(columns, group), rowGroupSize: group.length });
      group = [];
    };
    for await (const line of readLines(this.#journal)) {
      const row = await rows.next();
      if (row.done) break;
      group.push({ row: row.value, result: JSON.parse(line) as JournalLine });
      if (group.length === ROWS_PER_READ) await flush();
    }
    await rows.return?.();
    await flush();
    await writer.finish();
    await rename(temporary, this.#output);
    if (complete) await rm(this.#journal, { force: true });
  }
}

const RESULT_SCHEMA: SchemaElement[] = [
  { name: "output", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" },
  { name: "finish_reason", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" },
  { name: "prompt_tokens", type: "INT32", repetition_type: "OPTIONAL" },
  { name: "completion_tokens", type: "INT32", repetition_type: "OPTIONAL" },
  { name: "error", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" },
];

/** The input's own column schema, then the result columns. */
function outputSchema(metadata: FileMetaData): SchemaElement[] {
  const [root, ...columns] = metadata.schema;
  return [{ ...root!, num_children: columns.length + RESULT_SCHEMA.length }, ...columns, ...RESULT_SCHEMA];
}

function columnData(columns: readonly string[], group: readonly { row: Row; result: ResultColumns }[]) {
  return [
    ...columns.map((name) => ({ name, data: group.map((g) => g.row[name] ?? null) })),
    ...RESULT_COLUMNS.map((name) => ({ name, data: group.map((g) => g.result[name]) })),
  ];
}
