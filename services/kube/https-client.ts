// KubeClient over node:http(s). Configuration and authentication are @kubernetes/client-node's
// (cluster-connection.ts, kubeconfig.ts); the requests are ours: client-node's informer has no
// injectable clock or backoff, server-side apply needs a middleware to set the patch content type, and
// its generated types are `any` and `metadata!` throughout (docs/STYLE.md). The API surface the
// operator needs is eight calls. A 401 makes the connection fetch its credentials again (an expired
// exec credential, a rotated token file) and the call is sent once more, as client-go does.

import {
  type ClientRequest,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { KubeApiError } from "./api-error.ts";
import type { ClusterConnection } from "./cluster-connection.ts";
import type {
  ApplyOptions,
  DeleteOptions,
  KubeClient,
  ListOptions,
  ObjectList,
  WatchEvent,
  WatchHandle,
} from "./kube-client.ts";
import { isObject, type KubeObject } from "./kube-object.ts";
import { LineSplitter } from "./line-splitter.ts";
import { type ResourceRef, resourcePath } from "./resources.ts";

export interface HttpsClientOptions {
  fieldManager: string;
  /** Per-request timeout of everything but watches. */
  timeoutMs?: number;
}

interface Reply {
  status: number;
  body: string;
}

export class HttpsKubeClient implements KubeClient {
  readonly #connection: ClusterConnection;
  readonly #fieldManager: string;
  readonly #timeoutMs: number;

  constructor(connection: ClusterConnection, options: HttpsClientOptions) {
    this.#connection = connection;
    this.#fieldManager = options.fieldManager;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  close(): void {
    this.#connection.close();
  }

  async get<T extends KubeObject>(ref: ResourceRef, namespace: string, name: string): Promise<T | undefined> {
    const reply = await this.#call("GET", resourcePath(ref, namespace, name));
    if (reply.status === 404) return undefined;
    return this.#object<T>(reply, `get ${ref.resource} ${namespace}/${name}`);
  }

  async list<T extends KubeObject>(ref: ResourceRef, options: ListOptions): Promise<ObjectList<T>> {
    const query = new URLSearchParams();
    if (options.labelSelector) query.set("labelSelector", options.labelSelector);
    const reply = await this.#call("GET", `${resourcePath(ref, options.namespace)}?${query}`);
    const list = this.#object<KubeObject & { items?: T[] }>(reply, `list ${ref.resource}`);
    return { items: list.items ?? [], resourceVersion: list.metadata.resourceVersion ?? "" };
  }

  create<T extends KubeObject>(ref: ResourceRef, namespace: string, object: KubeObject): Promise<T> {
    const query = new URLSearchParams({ fieldManager: this.#fieldManager });
    return this.#send<T>(
      "POST",
      `${resourcePath(ref, namespace)}?${query}`,
      "application/json",
      object,
      `create ${ref.resource}`,
    );
  }

  update<T extends KubeObject>(ref: ResourceRef, namespace: string, object: KubeObject): Promise<T> {
    const query = new URLSearchParams({ fieldManager: this.#fieldManager });
    const url = `${resourcePath(ref, namespace, object.metadata.name ?? "")}?${query}`;
    return this.#send<T>(
      "PUT",
      url,
      "application/json",
      object,
      `update ${ref.resource} ${object.metadata.name}`,
    );
  }

  apply<T extends KubeObject>(
    ref: ResourceRef,
    namespace: string,
    object: KubeObject,
    options: ApplyOptions = {},
  ): Promise<T> {
    const query = new URLSearchParams({ fieldManager: this.#fieldManager });
    if (options.force) query.set("force", "true");
    const url = `${resourcePath(ref, namespace, object.metadata.name ?? "", options.subresource)}?${query}`;
    const what = `apply ${ref.resource}${options.subresource ? `/${options.subresource}` : ""} ${namespace}/${object.metadata.name}`;
    return this.#send<T>("PATCH", url, "application/apply-patch+yaml", object, what);
  }

  mergePatch<T extends KubeObject>(
    ref: ResourceRef,
    namespace: string,
    name: string,
    patch: unknown,
  ): Promise<T> {
    const query = new URLSearchParams({ fieldManager: this.#fieldManager });
    const url = `${resourcePath(ref, namespace, name)}?${query}`;
    return this.#send<T>(
      "PATCH",
      url,
      "application/merge-patch+json",
      patch,
      `patch ${ref.resource} ${namespace}/${name}`,
    );
  }

  async delete(
    ref: ResourceRef,
    namespace: string,
    name: string,
    options: DeleteOptions = {},
  ): Promise<boolean> {
    const body = {
      kind: "DeleteOptions",
      apiVersion: "v1",
      ...(options.propagationPolicy ? { propagationPolicy: options.propagationPolicy } : {}),
      ...(options.uid ? { preconditions: { uid: options.uid } } : {}),
    };
    const reply = await this.#call(
      "DELETE",
      resourcePath(ref, namespace, name),
      "application/json",
      JSON.stringify(body),
    );
    if (reply.status === 404) return false;
    if (reply.status >= 300)
      throw KubeApiError.fromResponse(
        reply.status,
        reply.body,
        `delete ${ref.resource} ${namespace}/${name}`,
      );
    return true;
  }

  watch<T extends KubeObject>(
    ref: ResourceRef,
    options: ListOptions & { resourceVersion: string; timeoutSeconds?: number },
    onEvent: (event: WatchEvent<T>) => void,
  ): WatchHandle {
    const query = new URLSearchParams({
      watch: "true",
      allowWatchBookmarks: "true",
      resourceVersion: options.resourceVersion,
      timeoutSeconds: String(options.timeoutSeconds ?? 300),
    });
    if (options.labelSelector) query.set("labelSelector", options.labelSelector);
    const url = new URL(`${resourcePath(ref, options.namespace)}?${query}`, this.#connection.server);
    let stopped = false;
    let stop = () => {
      stopped = true;
    };
    const done = new Promise<void>((resolve, reject) => {
      const open = (auth: RequestOptions) => {
        if (stopped) return resolve();
        const req = this.#request(url, { method: "GET", ...auth }, (res) => {
          const status = res.statusCode ?? 0;
          if (status === 401) this.#connection.refreshCredentials();
          if (status !== 200) {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (chunk: string) => {
              body += chunk;
            });
            res.on("end", () => reject(KubeApiError.fromResponse(status, body, `watch ${ref.resource}`)));
            return;
          }
          const lines = new LineSplitter();
          res.on("data", (chunk: Buffer) => {
            for (const line of lines.push(chunk)) {
              const failure = dispatch(line, onEvent, ref.resource);
              if (failure) {
                reject(failure);
                req.destroy();
                return;
              }
            }
          });
          res.on("end", () => resolve());
          res.on("error", (err) => reject(unreachable(err, `watch ${ref.resource}`)));
        });
        req.on("error", (err) => reject(unreachable(err, `watch ${ref.resource}`)));
        req.end();
        stop = () => {
          req.destroy();
          resolve();
        };
      };
      this.#auth().then(open, (err: unknown) => reject(unauthenticated(err, `watch ${ref.resource}`)));
    });
    return { done, stop: () => stop() };
  }

  async #send<T extends KubeObject>(
    method: string,
    url: string,
    type: string,
    body: unknown,
    what: string,
  ): Promise<T> {
    return this.#object<T>(await this.#call(method, url, type, JSON.stringify(body)), what);
  }

  #object<T>(reply: Reply, what: string): T {
    if (reply.status >= 300) throw KubeApiError.fromResponse(reply.status, reply.body, what);
    return JSON.parse(reply.body) as T;
  }

  /** The connection's agent and headers (Authorization included) for one request. */
  async #auth(contentType?: string, body?: string): Promise<RequestOptions> {
    const { headers, agent } = await this.#connection.requestAuth();
    headers["accept"] = "application/json";
    headers["user-agent"] = "tessera-operator";
    if (contentType) headers["content-type"] = contentType;
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));
    return { headers, agent };
  }

  #request(url: URL, options: RequestOptions, onResponse: (res: IncomingMessage) => void): ClientRequest {
    return (url.protocol === "http:" ? httpRequest : httpsRequest)(url, options, onResponse);
  }

  async #call(method: string, path: string, contentType?: string, body?: string): Promise<Reply> {
    const reply = await this.#callOnce(method, path, contentType, body);
    if (reply.status !== 401) return reply;
    this.#connection.refreshCredentials();
    return this.#callOnce(method, path, contentType, body);
  }

  async #callOnce(method: string, path: string, contentType?: string, body?: string): Promise<Reply> {
    const url = new URL(path, this.#connection.server);
    let auth: RequestOptions;
    try {
      auth = await this.#auth(contentType, body);
    } catch (err) {
      throw unauthenticated(err, `${method} ${url.pathname}`);
    }
    return new Promise((resolve, reject) => {
      const req = this.#request(url, { method, ...auth, timeout: this.#timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", (err) => reject(unreachable(err, `${method} ${url.pathname}`)));
      });
      req.on("timeout", () => req.destroy(new Error(`no answer in ${this.#timeoutMs} ms`)));
      req.on("error", (err) => reject(unreachable(err, `${method} ${url.pathname}`)));
      req.end(body);
    });
  }
}

/** Credentials could not be had (an exec plugin failed, a token file is gone): status 401. */
function unauthenticated(err: unknown, what: string): KubeApiError {
  const message = err instanceof Error ? err.message.trim() : String(err);
  return new KubeApiError(401, "Unauthorized", `${what}: cannot get credentials: ${message}`, { cause: err });
}

/** A network failure: status 0, gRPC code UNAVAILABLE. */
function unreachable(err: Error, what: string): KubeApiError {
  return new KubeApiError(0, "Unreachable", `${what}: ${err.message}`, { cause: err });
}

/** Hands one watch line to onEvent; an ERROR event (e.g. 410 Gone) becomes the watch's failure. */
function dispatch<T extends KubeObject>(
  line: string,
  onEvent: (event: WatchEvent<T>) => void,
  resource: string,
): KubeApiError | undefined {
  const event = JSON.parse(line) as { type?: string; object?: unknown };
  if (event.type === "ERROR") {
    const status =
      isObject(event.object) && typeof event.object["code"] === "number" ? event.object["code"] : 500;
    return KubeApiError.fromResponse(status, JSON.stringify(event.object), `watch ${resource}`);
  }
  if (
    event.type === "ADDED" ||
    event.type === "MODIFIED" ||
    event.type === "DELETED" ||
    event.type === "BOOKMARK"
  )
    onEvent({ type: event.type, object: event.object as T });
  return undefined;
}
