// Everything that names the image names the one scripts/build-image.sh builds: the chart's
// repository with its appVersion, in the operator's manifests, the WorkerPool default (and the
// CRDs generated from it) and the examples. Bumping appVersion without them fails here.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { DEFAULT_WORKER_IMAGE } from "../../services/api/worker-pool.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const NAMING_FILES = [
  "operator/deploy/operator.yaml",
  "crds/workerpools.serving.tessera.dev.yaml",
  "charts/tessera/crds/workerpools.serving.tessera.dev.yaml",
  "examples/dev-cluster/operator.yaml",
  "examples/kubernetes/gpu-pool.yaml",
];

describe("the image every manifest names", () => {
  const appVersion = /^appVersion: "?([^"\n]+)"?$/m.exec(read("charts/tessera/Chart.yaml"))?.[1];
  const repository = /^ {2}repository: (\S+)$/m.exec(read("charts/tessera/values.yaml"))?.[1];
  const image = `${repository}:${appVersion}`;

  it("is the one scripts/build-image.sh builds: the chart's repository tagged with its appVersion", () => {
    assert.equal(repository, "ghcr.io/tessera-dev/tessera");
    const built = execFileSync("bash", ["scripts/build-image.sh", "--print-image"], {
      cwd: ROOT,
      env: { ...process.env, TESSERA_IMAGE: "" },
      encoding: "utf8",
    });
    assert.equal(built.trim(), image);
    assert.equal(DEFAULT_WORKER_IMAGE, image);
  });

  it("is named, with that tag, by the operator's manifests, the CRDs and the examples", () => {
    for (const file of NAMING_FILES) {
      const named = [...read(file).matchAll(/ghcr\.io\/tessera-dev\/tessera:[^\s"']+/g)].map((m) => m[0]);
      assert.ok(named.length > 0, `${file} names no image`);
      for (const name of named) assert.equal(name, image, file);
    }
  });
});
