// The request router: discovery, OpenAPI, health and version documents, and resource requests.
// Errors become Status objects. Everything is logged at debug level with its duration.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../../../services/kernel/log.ts";
import { answerAuthEndpoint, isAuthEndpoint } from "../auth/auth-endpoints.ts";
import { checkEscalation } from "../auth/escalation.ts";
import { admitRequest, type RequestAuth } from "../auth/request-auth.ts";
import { apiErrors } from "../core/api-status.ts";
import { decodeBody, readBody } from "./body-codec.ts";
import {
  AGGREGATED_DISCOVERY_TYPE,
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  versionInfo,
  wantsAggregatedDiscovery,
} from "./discovery.ts";
import { openApiDocument, openApiIndex } from "./openapi.ts";
import { parseRequestPath } from "./request-info.ts";
import { handleResource, type ResourceHandlerOptions } from "./resource-handler.ts";
import { sendError, sendJson } from "./respond.ts";

export interface HttpHandlerOptions extends ResourceHandlerOptions {
  log: Logger;
  /** Who may do what: every request is authenticated and authorized. */
  auth: RequestAuth;
}

export function createHttpHandler(options: HttpHandlerOptions) {
  const { log } = options;
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const url = new URL(req.url ?? "/", "https://localhost");
    try {
      await route(req, res, url, options);
    } catch (err) {
      const status = sendError(res, err);
      if (status.code >= 500) log.error({ err, method: req.method, path: url.pathname }, "request failed");
    } finally {
      log.debug(
        {
          method: req.method,
          url: req.url,
          code: res.statusCode,
          ms: Math.round(performance.now() - started),
          agent: req.headers["user-agent"],
        },
        "request",
      );
    }
  };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  options: HttpHandlerOptions,
): Promise<void> {
  const { api } = options;
  const registry = api.registry;
  const target = parseRequestPath(url.pathname);
  const user = admitRequest(req, url, target, options.auth);
  const accept = req.headers.accept;
  switch (target.kind) {
    case "version":
      return sendJson(res, 200, versionInfo());
    case "health":
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("ok");
      return;
    case "api-versions":
      if (wantsAggregatedDiscovery(accept))
        return sendJson(res, 200, aggregatedDiscovery(registry, true), AGGREGATED_DISCOVERY_TYPE);
      return sendJson(res, 200, apiVersions(req.headers.host ?? "127.0.0.1"));
    case "api-groups":
      if (wantsAggregatedDiscovery(accept))
        return sendJson(res, 200, aggregatedDiscovery(registry, false), AGGREGATED_DISCOVERY_TYPE);
      return sendJson(res, 200, apiGroupList(registry));
    case "group": {
      const group = apiGroup(registry, target.group);
      if (!group) throw notFound(url.pathname);
      return sendJson(res, 200, group);
    }
    case "resource-list": {
      const list = apiResourceList(registry, target.group, target.version);
      if (!list) throw notFound(url.pathname);
      return sendJson(res, 200, list);
    }
    case "openapi-index":
      return sendJson(res, 200, openApiIndex(registry));
    case "openapi": {
      const doc = openApiDocument(registry, target.group, target.version);
      if (!doc) throw notFound(url.pathname);
      return sendJson(res, 200, doc);
    }
    case "resource":
      if (isAuthEndpoint(target)) {
        if (req.method !== "POST") throw apiErrors.methodNotAllowed(`${req.method} is not supported`);
        const body = decodeBody(await readBody(req), req.headers["content-type"]);
        return sendJson(res, 201, answerAuthEndpoint(target, body, user, options.auth));
      }
      return handleResource(req, res, target, url.searchParams, options, (type, object) =>
        checkEscalation(options.auth.rbac, user, type, object),
      );
    case "not-found":
      throw notFound(url.pathname);
    default: {
      const never: never = target;
      return never;
    }
  }
}

function notFound(_path: string) {
  return apiErrors.noResource();
}
