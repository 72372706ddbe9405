// A minimal HTTPS client for conformance tests: verifies the server's certificate with the CA
// from its kubeconfig, authenticates with a client certificate (the admin's), speaks JSON, and
// reads watch streams event by event.

import type { IncomingMessage } from "node:http";
import { request } from "node:https";

export interface HttpReply<T = Record<string, unknown>> {
  status: number;
  headers: IncomingMessage["headers"];
  body: T;
}

export interface WatchStream {
  /** The next event, or undefined when the server ended the stream. */
  next(timeoutMs?: number): Promise<{ type: string; object: Record<string, unknown> } | undefined>;
  close(): void;
}

export class KubeHttp {
  readonly #base: URL;
  readonly #ca: string;
  readonly #client: { cert: string; key: string };

  constructor(url: string, ca: string, client: { cert: string; key: string }) {
    this.#base = new URL(url);
    this.#ca = ca;
    this.#client = client;
  }

  #open(
    method: string,
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<IncomingMessage> {
    const payload =
      body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: this.#base.hostname,
          port: this.#base.port,
          method,
          path,
          ca: this.#ca,
          cert: this.#client.cert,
          key: this.#client.key,
          headers: {
            "Content-Type": "application/json",
            Accept: "application/json",
            ...headers,
            ...(payload ? { "Content-Length": String(payload.length) } : {}),
          },
        },
        resolve,
      );
      req.on("error", reject);
      req.end(payload);
    });
  }

  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpReply<T>> {
    const res = await this.#open(method, path, body, headers);
    const chunks: Buffer[] = [];
    for await (const chunk of res) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return { status: res.statusCode ?? 0, headers: res.headers, body: (text ? JSON.parse(text) : {}) as T };
  }

  get = <T = Record<string, unknown>>(path: string, headers?: Record<string, string>) =>
    this.call<T>("GET", path, undefined, headers);
  post = <T = Record<string, unknown>>(path: string, body: unknown, headers?: Record<string, string>) =>
    this.call<T>("POST", path, body, headers);
  put = <T = Record<string, unknown>>(path: string, body: unknown) => this.call<T>("PUT", path, body);
  patch = <T = Record<string, unknown>>(path: string, type: string, body: unknown) =>
    this.call<T>("PATCH", path, body, { "Content-Type": type });
  delete = <T = Record<string, unknown>>(path: string, body?: unknown) => this.call<T>("DELETE", path, body);

  /** Opens a watch; resolves once the response headers arrived. */
  async watch(path: string): Promise<WatchStream & { status: number }> {
    const res = await this.#open("GET", path, undefined, {});
    const queue: string[] = [];
    const waiters: (() => void)[] = [];
    let buffer = "";
    let ended = false;
    const wake = () => waiters.splice(0).forEach((w) => void w());
    res.setEncoding("utf8");
    res.on("data", (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf("\n");
      while (newline >= 0) {
        queue.push(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
      }
      wake();
    });
    res.on("end", () => {
      ended = true;
      wake();
    });
    res.on("error", () => {
      ended = true;
      wake();
    });
    return {
      status: res.statusCode ?? 0,
      next: async (timeoutMs = 5_000) => {
        const deadline = Date.now() + timeoutMs;
        while (queue.length === 0 && !ended) {
          if (Date.now() > deadline) throw new Error(`no watch event within ${timeoutMs} ms`);
          await new Promise<void>((resolve) => {
            waiters.push(resolve);
            setTimeout(resolve, 50).unref();
          });
        }
        const line = queue.shift();
        return line === undefined ? undefined : JSON.parse(line);
      },
      close: () => res.destroy(),
    };
  }
}
