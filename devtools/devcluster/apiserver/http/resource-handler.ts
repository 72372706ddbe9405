// The REST verbs of one resource request, translated onto ClusterApi: list / watch / get,
// create, update, patch (all four types), delete and deletecollection, with the status, scale,
// finalize and log subresources.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Clock } from "../../../../services/kernel/clock.ts";
import type { JsonValue, KubeObject } from "../../../../services/kube/kube-object.ts";
import type { ResourceRef, WriteOptions } from "../cluster/api-types.ts";
import type { ClusterApi } from "../cluster/cluster-api.ts";
import { toScale } from "../cluster/scale.ts";
import { apiErrors, successStatus } from "../core/api-status.ts";
import { isJsonObject } from "../core/json-object.ts";
import { groupResourceOf } from "../resources/resource-type.ts";
import { decodeBody, patchTypeOf, readBody } from "./body-codec.ts";
import { type PodLogSource, podLogRequest } from "./pod-logs.ts";
import { deleteOptions, isWatch, listOptions, watchOptions, writeOptions } from "./query-options.ts";
import type { ResourceRequest } from "./request-info.ts";
import { sendJson } from "./respond.ts";
import { type IncludeObject, negotiateRendering, toMetadata, toMetadataList, toTable } from "./table.ts";
import { serveWatch } from "./watch-stream.ts";

export interface ResourceHandlerOptions {
  api: ClusterApi;
  clock: Clock;
  watchTimeoutMs: number;
  bookmarkIntervalMs: number;
  podLogs?: PodLogSource;
}

function objectBody(body: JsonValue | undefined): KubeObject {
  if (!isJsonObject(body)) throw apiErrors.badRequest("the request body must be an object");
  const object = body as unknown as KubeObject;
  if (!isJsonObject(object.metadata)) object.metadata = {};
  return object;
}

export async function handleResource(
  req: IncomingMessage,
  res: ServerResponse,
  target: ResourceRequest,
  query: URLSearchParams,
  h: ResourceHandlerOptions,
  /** Checks each object before it is written (the requester's RBAC escalation check). */
  validate?: WriteOptions["validate"],
): Promise<void> {
  const { api } = h;
  const ref: ResourceRef = { group: target.group, version: target.version, resource: target.resource };
  const type = api.resolve(ref);
  const namespace = type.namespaced ? (target.namespace ?? "") : "";
  const name = target.name;
  const sub = target.subresource;
  const method = req.method ?? "GET";
  const rendering = negotiateRendering(req.headers.accept);
  const warnings: string[] = [];
  const write: WriteOptions = {
    ...writeOptions(query, req.headers["user-agent"]),
    onWarning: (w) => warnings.push(w),
    ...(validate ? { validate } : {}),
    ...(sub && sub !== "finalize" ? { subresource: sub } : {}),
  };
  const reply = (code: number, object: KubeObject) => {
    if (rendering.kind === "table") {
      const include = (query.get("includeObject") ?? "Metadata") as IncludeObject;
      sendJson(
        res,
        code,
        toTable(type, [object], { now: h.clock.now(), version: rendering.version, include }),
        "application/json",
        warnings,
      );
    } else if (rendering.kind === "metadata")
      sendJson(res, code, toMetadata(object, rendering.version), "application/json", warnings);
    else sendJson(res, code, object, "application/json", warnings);
  };
  const listNamespace = target.namespace === undefined ? undefined : namespace;

  if (name === undefined) {
    if (method === "GET" && isWatch(query)) {
      const seconds = Number(query.get("timeoutSeconds") ?? "");
      const timeoutMs =
        Number.isFinite(seconds) && seconds > 0
          ? Math.min(seconds * 1000, h.watchTimeoutMs)
          : h.watchTimeoutMs;
      serveWatch(req, res, api, ref, watchOptions(query, listNamespace), {
        clock: h.clock,
        timeoutMs,
        bookmarks: query.get("allowWatchBookmarks") === "true",
        bookmarkIntervalMs: h.bookmarkIntervalMs,
        rendering,
      });
      return;
    }
    if (method === "GET") {
      const list = api.list(ref, listOptions(query, listNamespace));
      if (rendering.kind === "table") {
        const include = (query.get("includeObject") ?? "Metadata") as IncludeObject;
        const table = toTable(type, list.items, {
          now: h.clock.now(),
          version: rendering.version,
          include,
          resourceVersion: list.resourceVersion,
          ...(list.continue ? { continue: list.continue } : {}),
        });
        sendJson(res, 200, table);
      } else if (rendering.kind === "metadata")
        sendJson(res, 200, toMetadataList(list.items, rendering.version, list.resourceVersion));
      else {
        const metadata = {
          resourceVersion: list.resourceVersion,
          ...(list.continue
            ? { continue: list.continue, remainingItemCount: list.remainingItemCount ?? 0 }
            : {}),
        };
        sendJson(res, 200, {
          kind: type.listKind,
          apiVersion: type.group === "" ? type.version : `${type.group}/${type.version}`,
          metadata,
          items: list.items,
        });
      }
      return;
    }
    const body = decodeBody(await readBody(req), req.headers["content-type"]);
    if (method === "POST") return reply(201, api.create(ref, namespace, objectBody(body), write));
    if (method === "DELETE") {
      const removed = api.deleteCollection(ref, {
        ...listOptions(query, listNamespace),
        ...deleteOptions(query, body),
      });
      sendJson(res, 200, {
        kind: type.listKind,
        apiVersion: type.group === "" ? type.version : `${type.group}/${type.version}`,
        metadata: { resourceVersion: api.resourceVersion },
        items: removed,
      });
      return;
    }
    throw apiErrors.methodNotAllowed(`${method} is not supported on a collection`);
  }

  if (sub !== undefined && !["status", "scale", "finalize", "log"].includes(sub))
    throw apiErrors.notFound({ group: type.group, resource: `${type.plural}/${sub}`, name });
  if (method === "GET") {
    if (sub === "log") return streamLogs(req, res, namespace, name, query, h);
    const object = api.get(ref, namespace, name);
    if (sub === "scale") return sendJson(res, 200, toScale(type, object));
    return reply(200, object);
  }
  const body = decodeBody(await readBody(req), req.headers["content-type"]);
  switch (method) {
    case "PUT": {
      const object = objectBody(body);
      if (sub === "finalize") {
        const current = api.get(ref, namespace, name);
        current["spec"] = {
          ...(current["spec"] as object),
          finalizers: (object["spec"] as { finalizers?: unknown } | undefined)?.finalizers ?? [],
        };
        return reply(200, api.update(ref, namespace, name, current, write));
      }
      return reply(200, api.update(ref, namespace, name, object, write));
    }
    case "PATCH": {
      if (body === undefined) throw apiErrors.badRequest("the patch body is empty");
      const patchType = patchTypeOf(req.headers["content-type"]);
      const existed =
        patchType === "apply" && api.store.get(groupResourceOf(type), namespace, name) !== undefined;
      const result = api.patch(ref, namespace, name, patchType, body, write);
      return reply(patchType === "apply" && !existed ? 201 : 200, result);
    }
    case "DELETE": {
      const result = api.delete(ref, namespace, name, deleteOptions(query, body));
      if (result.deleted && type.group === "" && type.plural !== "pods") {
        sendJson(
          res,
          200,
          successStatus({
            name,
            group: type.group,
            kind: type.plural,
            uid: result.object.metadata.uid ?? "",
          }),
        );
        return;
      }
      return reply(result.deleted ? 200 : 202, result.object);
    }
    default:
      throw apiErrors.methodNotAllowed(`${method} is not supported`);
  }
}

async function streamLogs(
  req: IncomingMessage,
  res: ServerResponse,
  namespace: string,
  name: string,
  query: URLSearchParams,
  h: ResourceHandlerOptions,
): Promise<void> {
  h.api.get({ group: "", version: "v1", resource: "pods" }, namespace, name);
  if (!h.podLogs)
    throw apiErrors.badRequest(
      `container is not running in pod "${name}": no kubelet serves logs in this cluster`,
    );
  const abort = new AbortController();
  req.on("close", () => abort.abort());
  const chunks = await h.podLogs(podLogRequest(namespace, name, query, abort.signal));
  res.writeHead(200, { "Content-Type": "text/plain", "Transfer-Encoding": "chunked" });
  res.flushHeaders();
  for await (const chunk of chunks) {
    if (abort.signal.aborted) break;
    res.write(chunk);
  }
  res.end();
}
