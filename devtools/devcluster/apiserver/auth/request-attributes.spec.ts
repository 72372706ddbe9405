import assert from "node:assert/strict";
import { parseRequestPath } from "../http/request-info.ts";
import { requestAttributes } from "./request-attributes.ts";

const attrs = (method: string, url: string) => {
  const parsed = new URL(url, "https://x");
  return requestAttributes(method, parsed.pathname, parsed.searchParams, parseRequestPath(parsed.pathname));
};

describe("request-attributes", () => {
  it("maps methods to RBAC verbs as RequestInfo does", () => {
    const table: [string, string, string][] = [
      ["GET", "/api/v1/namespaces/d/pods", "list"],
      ["GET", "/api/v1/namespaces/d/pods?watch=true", "watch"],
      ["GET", "/api/v1/namespaces/d/pods/p", "get"],
      ["POST", "/api/v1/namespaces/d/pods", "create"],
      ["PUT", "/api/v1/namespaces/d/pods/p", "update"],
      ["PATCH", "/api/v1/namespaces/d/pods/p", "patch"],
      ["DELETE", "/api/v1/namespaces/d/pods/p", "delete"],
      ["DELETE", "/api/v1/namespaces/d/pods", "deletecollection"],
    ];
    for (const [method, url, verb] of table) assert.equal(attrs(method, url).verb, verb, `${method} ${url}`);
  });

  it("names group, resource, subresource, namespace and name; other paths by path and method", () => {
    assert.deepEqual(
      attrs("PATCH", "/apis/serving.tessera.dev/v1alpha1/namespaces/d/inferencemodels/m/status"),
      {
        kind: "resource",
        verb: "patch",
        apiGroup: "serving.tessera.dev",
        resource: "inferencemodels",
        subresource: "status",
        namespace: "d",
        name: "m",
      },
    );
    assert.deepEqual(attrs("GET", "/api/v1/namespaces/team"), {
      kind: "resource",
      verb: "get",
      apiGroup: "",
      resource: "namespaces",
      namespace: "team",
      name: "team",
    });
    assert.deepEqual(attrs("GET", "/healthz"), { kind: "non-resource", verb: "get", path: "/healthz" });
  });
});
