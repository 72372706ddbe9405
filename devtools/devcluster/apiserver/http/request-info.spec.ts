import assert from "node:assert/strict";
import { parseRequestPath } from "./request-info.ts";

describe("request-info", () => {
  it("parses resource paths, namespaced and cluster-scoped, with subresources", () => {
    assert.deepEqual(parseRequestPath("/apis/apps/v1/namespaces/ns/deployments/web/scale"), {
      kind: "resource",
      group: "apps",
      version: "v1",
      namespace: "ns",
      resource: "deployments",
      name: "web",
      subresource: "scale",
    });
    assert.deepEqual(parseRequestPath("/api/v1/pods"), {
      kind: "resource",
      group: "",
      version: "v1",
      resource: "pods",
    });
    assert.deepEqual(parseRequestPath("/api/v1/namespaces/ns"), {
      kind: "resource",
      group: "",
      version: "v1",
      resource: "namespaces",
      name: "ns",
    });
    assert.deepEqual(parseRequestPath("/api/v1/namespaces/ns/finalize"), {
      kind: "resource",
      group: "",
      version: "v1",
      resource: "namespaces",
      name: "ns",
      subresource: "finalize",
    });
  });

  it("recognises discovery, OpenAPI and health paths", () => {
    assert.equal(parseRequestPath("/apis").kind, "api-groups");
    assert.deepEqual(parseRequestPath("/apis/apps/v1"), {
      kind: "resource-list",
      group: "apps",
      version: "v1",
    });
    assert.deepEqual(parseRequestPath("/openapi/v3/api/v1"), { kind: "openapi", group: "", version: "v1" });
    assert.equal(parseRequestPath("/readyz").kind, "health");
    assert.equal(parseRequestPath("/nope").kind, "not-found");
  });
});
