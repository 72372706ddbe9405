// Reads a JSON request body, bounded: a body over `maxBytes` is 413 (RESOURCE_EXHAUSTED with the
// limit), bad JSON is 400.
import type { IncomingMessage } from "node:http";
import { Code, TesseraError } from "../../kernel/errors.ts";

export class PayloadTooLarge extends TesseraError {
  constructor(maxBytes: number) {
    super(Code.RESOURCE_EXHAUSTED, `the request body is larger than ${maxBytes} bytes`);
  }
}

export async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > maxBytes) throw new PayloadTooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new PayloadTooLarge(maxBytes);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (err) {
    throw TesseraError.invalidArgument("body", `not valid JSON: ${(err as Error).message}`);
  }
}
