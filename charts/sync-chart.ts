// `npm run chart`: refreshes the chart's copies of the CRDs and the operator's RBAC rules, and its dashboards.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CHART, chartCopies, ROOT } from "./chart-sources.ts";

const copies = chartCopies();
// A CRD removed from crds/ goes from the chart too.
for (const name of readdirSync(path.join(ROOT, CHART, "crds")))
  if (!copies.has(`${CHART}/crds/${name}`)) rmSync(path.join(ROOT, CHART, "crds", name));
for (const [file, content] of copies) {
  mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
  writeFileSync(path.join(ROOT, file), content);
  console.log(`wrote ${file}`);
}
