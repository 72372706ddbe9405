import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CHART, chartCopies, ROOT } from "./chart-sources.ts";

describe("the chart's copies of the CRDs and the operator's RBAC rules", () => {
  it("equal their sources (run `npm run chart` after `npm run crds` or a permission change)", () => {
    const copies = chartCopies();
    for (const [file, content] of copies)
      assert.equal(
        readFileSync(path.join(ROOT, file), "utf8"),
        content,
        `${file} is stale: run npm run chart`,
      );
    const crds = readdirSync(path.join(ROOT, CHART, "crds")).map((f) => `${CHART}/crds/${f}`);
    assert.deepEqual(
      crds.filter((f) => !copies.has(f)),
      [],
      "the chart has CRDs that crds/ does not: run npm run chart",
    );
  });
});
