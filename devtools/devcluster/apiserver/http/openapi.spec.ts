import assert from "node:assert/strict";
import { ResourceRegistry } from "../resources/registry.ts";
import { openApiDocument, openApiIndex } from "./openapi.ts";

describe("openapi", () => {
  const registry = new ResourceRegistry();

  it("indexes every group-version with a content hash", () => {
    const index = openApiIndex(registry) as { paths: Record<string, { serverRelativeURL: string }> };
    assert.match(
      index.paths["apis/apps/v1"]?.serverRelativeURL ?? "",
      /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{32}$/,
    );
  });

  it("documents a PATCH per kind with its GVK and fieldValidation, without strategic merge", () => {
    const doc = openApiDocument(registry, "", "v1") as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string }[];
            requestBody?: { content: object };
            "x-kubernetes-group-version-kind"?: object;
          }
        >
      >;
    };
    const patch = doc.paths["/api/v1/namespaces/{namespace}/pods/{name}"]?.["patch"];
    assert.deepEqual(patch?.["x-kubernetes-group-version-kind"], { group: "", version: "v1", kind: "Pod" });
    assert.ok(patch?.parameters?.some((p) => p.name === "fieldValidation"));
    assert.ok(
      !Object.keys(patch?.requestBody?.content ?? {}).includes("application/strategic-merge-patch+json"),
    );
    assert.ok(doc.paths["/api/v1/namespaces/{name}"]);
  });
});
