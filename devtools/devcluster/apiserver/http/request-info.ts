// Parses a request path the way the Kubernetes API server's RequestInfo does: which API group,
// version, namespace, resource, name and subresource it addresses.

export interface ResourceRequest {
  kind: "resource";
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
}

export type RequestTarget =
  | ResourceRequest
  | { kind: "version" }
  | { kind: "health" }
  | { kind: "api-versions" }
  | { kind: "api-groups" }
  | { kind: "group"; group: string }
  | { kind: "resource-list"; group: string; version: string }
  | { kind: "openapi-index" }
  | { kind: "openapi"; group: string; version: string }
  | { kind: "not-found" };

/** Subresources of a namespace that must not be read as "resources inside the namespace". */
const NAMESPACE_SUBRESOURCES = new Set(["status", "finalize"]);

function resourceParts(group: string, version: string, parts: string[]): RequestTarget {
  if (parts.length === 0) return { kind: "resource-list", group, version };
  let rest = parts;
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length > 1) {
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
  }
  const [resource, name, subresource, ...extra] = rest;
  if (!resource || extra.length > 0) return { kind: "not-found" };
  return {
    kind: "resource",
    group,
    version,
    resource,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(subresource !== undefined ? { subresource } : {}),
  };
}

export function parseRequestPath(pathname: string): RequestTarget {
  const parts = pathname
    .split("/")
    .filter((p) => p !== "")
    .map(decodeURIComponent);
  const [root, a, b, ...rest] = parts;
  switch (root) {
    case "version":
      return parts.length === 1 ? { kind: "version" } : { kind: "not-found" };
    case "healthz":
    case "readyz":
    case "livez":
      return { kind: "health" };
    case "api":
      if (a === undefined) return { kind: "api-versions" };
      return resourceParts(
        "",
        a,
        [b, ...rest].filter((p): p is string => p !== undefined),
      );
    case "apis":
      if (a === undefined) return { kind: "api-groups" };
      if (b === undefined) return { kind: "group", group: a };
      return resourceParts(a, b, rest);
    case "openapi":
      if (a !== "v3") return { kind: "not-found" };
      if (b === undefined) return { kind: "openapi-index" };
      if (b === "api" && rest.length === 1) return { kind: "openapi", group: "", version: rest[0]! };
      if (b === "apis" && rest.length === 2) return { kind: "openapi", group: rest[0]!, version: rest[1]! };
      return { kind: "not-found" };
    default:
      return { kind: "not-found" };
  }
}
