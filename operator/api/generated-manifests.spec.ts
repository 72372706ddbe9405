import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { generatedManifests, ROOT } from "./generated-manifests.ts";

describe("generated manifests (crds/, operator/deploy/rbac*.yaml)", () => {
  it("are up to date with their TypeScript sources (run `npm run crds`)", () => {
    for (const [file, content] of generatedManifests()) {
      const full = path.join(ROOT, file);
      assert.ok(existsSync(full), `${file} is missing: run npm run crds`);
      assert.equal(readFileSync(full, "utf8"), content, `${file} is stale: run npm run crds`);
    }
  });
});
