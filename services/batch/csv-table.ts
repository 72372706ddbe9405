// CSV batches: each data row is a request (table-request.ts), and the output is the input's columns
// followed by the result columns, one row per input row in input order, written as results arrive.
// The output is its own journal: a re-run reads back the rows it holds (cutting a row a crash tore) and
// appends the rest. The sink re-reads the input beside the results, so rows never wait in memory.
import { createReadStream } from "node:fs";
import { stat, truncate } from "node:fs/promises";
import { parse } from "csv-parse";
import { stringify } from "csv-stringify/sync";
import { Code, TesseraError } from "../kernel/errors.ts";
import { Appender, cutTornTail } from "./append-file.ts";
import type { BatchSink, ResumedResult } from "./batch-runner.ts";
import type { BatchItem, BatchResult } from "./batch-types.ts";
import { checkColumns, RESULT_COLUMNS, resultColumns, rowItem } from "./table-request.ts";

type Row = Record<string, string>;

export async function* csvItems(file: string): AsyncIterable<BatchItem> {
  let index = 0;
  for await (const row of csvRows(file)) yield rowItem(row, index++);
}

export async function countCsvRequests(file: string): Promise<number> {
  let n = 0;
  for await (const _ of csvRows(file)) n++;
  return n;
}

/** The data rows of a CSV file with a header; refuses a header that cannot make requests. */
function csvRows(file: string): AsyncIterable<Row> {
  return createReadStream(file).pipe(
    parse({
      columns: (header: string[]) => {
        const problem = checkColumns(header);
        if (problem) throw new TesseraError(Code.INVALID_ARGUMENT, `${file}: ${problem}`);
        return header;
      },
      bom: true,
    }),
  );
}

export class CsvSink implements BatchSink {
  readonly #input: string;
  readonly #file: string;
  readonly #out: Appender;
  #rows: AsyncIterator<Row> | undefined;
  #header: string[] | undefined;

  constructor(input: string, output: string) {
    this.#input = input;
    this.#file = output;
    this.#out = new Appender(output);
  }

  async *resumed(): AsyncIterable<ResumedResult> {
    if ((await cutTornTail(this.#file)) === 0) return;
    await this.#openInput();
    const expected = [...this.#header!, ...RESULT_COLUMNS].join(",");
    let good = 0;
    let index = 0;
    const columns = (header: string[]) => {
      if (header.join(",") !== expected)
        throw new TesseraError(
          Code.FAILED_PRECONDITION,
          `${this.#file} has the columns ${header.join(",")}, not the input's and the results' (${expected}): it belongs to another input`,
        );
      return header;
    };
    const parser = createReadStream(this.#file).pipe(parse({ columns, info: true }));
    try {
      for await (const { record, info } of parser as AsyncIterable<{
        record: Row;
        info: { bytes: number };
      }>) {
        good = info.bytes + 1;
        const failed = record["error"] !== "";
        yield { customId: record["custom_id"] || `row-${index + 1}`, succeeded: !failed };
        index++;
      }
    } catch (err) {
      // A row torn inside a quoted field: keep the rows before it.
      if ((err as { code?: string }).code !== "CSV_QUOTE_NOT_CLOSED") throw err;
      if (good > 0 && good < (await stat(this.#file)).size) await truncate(this.#file, good);
    }
    await this.#skipInput(index);
  }

  async write(results: readonly BatchResult[]): Promise<void> {
    const records: unknown[][] = [];
    if (this.#header === undefined) {
      await this.#openInput();
      if ((await sizeOf(this.#file)) === 0) records.push([...this.#header!, ...RESULT_COLUMNS]);
    }
    for (const result of results) {
      const next = await this.#rows!.next();
      if (next.done) throw new TesseraError(Code.INTERNAL, "more results than input rows");
      const row = next.value;
      const columns = resultColumns(result);
      records.push([
        ...this.#header!.map((c) => row[c] ?? ""),
        ...RESULT_COLUMNS.map((c) => columns[c] ?? ""),
      ]);
    }
    await this.#out.append(stringify(records));
  }

  async close(): Promise<void> {
    await this.#rows?.return?.();
    await this.#out.close();
  }

  async #openInput(): Promise<void> {
    if (this.#header !== undefined) return;
    const parser = createReadStream(this.#input).pipe(
      parse({
        columns: (header: string[]) => {
          this.#header = header;
          return header;
        },
        bom: true,
      }),
    );
    this.#rows = (parser as AsyncIterable<Row>)[Symbol.asyncIterator]();
    // The header is known once the first row is read; peek it without losing the row.
    const first = await this.#rows.next();
    const rest = this.#rows;
    let peeked = false;
    this.#rows = {
      next: () => {
        if (peeked) return rest.next();
        peeked = true;
        return Promise.resolve(first);
      },
      return: (value?: unknown) => rest.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
    };
    this.#header ??= [];
  }

  async #skipInput(rows: number): Promise<void> {
    for (let i = 0; i < rows; i++) await this.#rows!.next();
  }
}

async function sizeOf(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}
