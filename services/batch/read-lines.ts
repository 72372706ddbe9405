// The non-empty lines of a text file, streamed.
import { createReadStream, existsSync } from "node:fs";
import { createInterface } from "node:readline";

export async function* readLines(file: string): AsyncIterable<string> {
  if (!existsSync(file)) return;
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) if (line !== "") yield line;
}
