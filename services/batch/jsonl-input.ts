// An OpenAI batch input file (one JSON request per line) read as a stream of BatchItems, one line at a
// time, so a million-line file never sits in memory. Blank lines are skipped; line numbers count every
// line, as an editor shows them.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { parseBatchLine } from "./batch-line.ts";
import type { BatchItem } from "./batch-types.ts";

export async function* jsonlItems(file: string): AsyncIterable<BatchItem> {
  let lineNumber = 0;
  for await (const line of lines(file)) {
    lineNumber++;
    if (line.trim() === "") continue;
    yield parseBatchLine(line, lineNumber);
  }
}

/** Requests in the file (its non-blank lines), for progress. */
export async function countJsonlRequests(file: string): Promise<number> {
  let n = 0;
  for await (const line of lines(file)) if (line.trim() !== "") n++;
  return n;
}

function lines(file: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
}
