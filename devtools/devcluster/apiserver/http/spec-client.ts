// A few-line HTTPS client for the http/ specs (the e2e suites have a fuller one).
import { request } from "node:https";
import type { ApiServer } from "../api-server.ts";

export function call(
  server: ApiServer,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  /** "admin": the admin's client certificate; "none": only what `headers` carry (a token, or nothing). */
  credentials: "admin" | "none" = "admin",
): Promise<{ status: number; text: string; json: () => Record<string, unknown> }> {
  const url = new URL(server.url);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        ca: server.caCert,
        ...(credentials === "admin" ? { cert: server.admin.cert, key: server.admin.key } : {}),
        headers: { "Content-Type": "application/json", ...headers },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text, json: () => JSON.parse(text) }));
      },
    )
      .on("error", reject)
      .end(payload);
  });
}
