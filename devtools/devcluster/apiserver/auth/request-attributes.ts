// What an authorizer decides on, as kube-apiserver's RequestInfo gives it: for a resource request
// the verb (get, list, watch, create, update, patch, delete, deletecollection), API group,
// resource, subresource, namespace and name; for any other path the path and the lower-cased
// HTTP method.
import type { RequestTarget } from "../http/request-info.ts";

export interface ResourceAttributes {
  kind: "resource";
  verb: string;
  apiGroup: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface NonResourceAttributes {
  kind: "non-resource";
  verb: string;
  path: string;
}

export type RequestAttributes = ResourceAttributes | NonResourceAttributes;

function resourceVerb(method: string, named: boolean, query: URLSearchParams): string {
  switch (method) {
    case "GET":
    case "HEAD":
      if (!named) return ["true", "1"].includes(query.get("watch") ?? "") ? "watch" : "list";
      return "get";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return named ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
}

export function requestAttributes(
  method: string,
  pathname: string,
  query: URLSearchParams,
  target: RequestTarget,
): RequestAttributes {
  if (target.kind !== "resource") return { kind: "non-resource", verb: method.toLowerCase(), path: pathname };
  // A namespace is named by its own name, as RequestInfo does for /api/v1/namespaces/<name>.
  const namespace =
    target.namespace ?? (target.group === "" && target.resource === "namespaces" ? target.name : undefined);
  return {
    kind: "resource",
    verb: resourceVerb(method, target.name !== undefined, query),
    apiGroup: target.group,
    resource: target.resource,
    ...(target.subresource !== undefined ? { subresource: target.subresource } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(target.name !== undefined ? { name: target.name } : {}),
  };
}
