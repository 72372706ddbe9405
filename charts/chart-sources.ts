// The chart's files made from a source of truth elsewhere: the CRDs (crds/, generated from
// operator/api by `npm run crds`) go to charts/tessera/crds/ byte for byte, the operator's RBAC rules
// (operator/deploy/permissions.ts, the list its API calls are checked against) to
// charts/tessera/files/operator-rules.yaml, and the Grafana dashboards (charts/dashboards/) to
// charts/tessera/dashboards/*.json. `npm run chart` writes them; a spec fails when one is stale.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { stringify } from "yaml";
import { OPERATOR_PERMISSIONS } from "../operator/deploy/permissions.ts";
import { DASHBOARDS } from "./dashboards/dashboards.ts";
import { dashboardJson } from "./dashboards/panel-kit.ts";

export const ROOT = path.resolve(import.meta.dirname, "..");
export const CHART = "charts/tessera";

/** Path (from the repository root) -> content. */
export function chartCopies(): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(path.join(ROOT, "crds"))
    .filter((f) => f.endsWith(".yaml"))
    .sort())
    files.set(`${CHART}/crds/${name}`, readFileSync(path.join(ROOT, "crds", name), "utf8"));
  const header =
    "# Copied by `npm run chart` from operator/deploy/permissions.ts (every API call the operator makes); do not edit.\n";
  files.set(`${CHART}/files/operator-rules.yaml`, header + stringify(OPERATOR_PERMISSIONS, { lineWidth: 0 }));
  for (const [name, spec] of Object.entries(DASHBOARDS))
    files.set(`${CHART}/dashboards/${name}.json`, `${JSON.stringify(dashboardJson(spec), null, 2)}\n`);
  return files;
}
