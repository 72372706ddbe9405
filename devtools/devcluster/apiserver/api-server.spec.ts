import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../../../services/kernel/log.ts";
import { startApiServer } from "./api-server.ts";

const CONFIGMAPS = { group: "", version: "v1", resource: "configmaps" };
const log = createLogger("apiserver-spec", "warn");

describe("api-server", () => {
  it("keeps state in a file across restarts, CRDs included", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "apiserver-"));
    const stateFile = path.join(dir, "state.json");
    const first = await startApiServer({ stateFile, kubeconfigPath: path.join(dir, "kubeconfig") }, { log });
    first.api.create(CONFIGMAPS, "default", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kept" },
    });
    first.api.create(
      { group: "apiextensions.k8s.io", version: "v1", resource: "customresourcedefinitions" },
      "",
      {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "things.example.dev" },
        spec: {
          group: "example.dev",
          scope: "Namespaced",
          names: { plural: "things", kind: "Thing" },
          versions: [
            { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } },
          ],
        },
      },
    );
    const rv = first.api.resourceVersion;
    await first.close();
    assert.match(readFileSync(path.join(dir, "kubeconfig"), "utf8"), new RegExp(`server: ${first.url}`));

    const second = await startApiServer({ stateFile }, { log });
    try {
      assert.equal(second.api.get(CONFIGMAPS, "default", "kept").metadata.name, "kept");
      assert.ok(
        second.api.registry.byResource("example.dev", "v1", "things"),
        "stored CRDs are served again",
      );
      assert.equal(second.api.resourceVersion, rv);
    } finally {
      await second.close();
    }
  });

  it("rejects invalid configuration at start-up", async () => {
    await assert.rejects(startApiServer({ port: 70000 }, { log }), /apiserver config/);
  });
});
