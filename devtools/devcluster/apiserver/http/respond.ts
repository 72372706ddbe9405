// Writing responses: JSON bodies, Status errors and warning headers.
import type { ServerResponse } from "node:http";
import { type KubeStatus, toStatus } from "../core/api-status.ts";

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  contentType = "application/json",
  warnings: string[] = [],
): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | string[]> = {
    "Content-Type": contentType,
    "Content-Length": String(Buffer.byteLength(text)),
    "Cache-Control": "no-cache, private",
  };
  if (warnings.length > 0) headers["Warning"] = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  res.writeHead(code, headers);
  res.end(text);
}

export function sendError(res: ServerResponse, err: unknown): KubeStatus {
  const status = toStatus(err);
  if (res.headersSent) {
    res.destroy();
    return status;
  }
  sendJson(res, status.code, status);
  return status;
}
