// Every PromQL query of the chart's Grafana dashboards (panel targets and variable queries), with
// Grafana's variables replaced the way Grafana would for "All" and a short range, so Prometheus's API
// can run them; and the tessera_* metric names each one reads.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

export interface DashboardQuery {
  dashboard: string;
  panel: string;
  expr: string;
  /** The query as Prometheus runs it. */
  promql: string;
  metrics: string[];
}

export interface VariableQuery {
  dashboard: string;
  variable: string;
  metric: string;
  label: string;
}

interface PanelJson {
  title?: string;
  type?: string;
  panels?: PanelJson[];
  targets?: { expr?: string }[];
}

interface DashboardJson {
  title: string;
  panels: PanelJson[];
  templating?: { list: { name: string; type: string; definition?: string }[] };
}

const GRAFANA_VARIABLES: [RegExp, string][] = [
  [/\$__rate_interval/g, "1m"],
  [/\$__interval/g, "5s"],
  [/\$__range/g, "5m"],
  [/\$\{?model\}?/g, ".*"],
];

export function toPromql(expr: string): string {
  return GRAFANA_VARIABLES.reduce((q, [pattern, value]) => q.replace(pattern, value), expr);
}

export function metricNames(expr: string): string[] {
  return [...new Set(expr.match(/\btessera_[a-z0-9_]+\b/g) ?? [])].sort();
}

function panelsOf(panels: PanelJson[]): PanelJson[] {
  return panels.flatMap((p) => [p, ...panelsOf(p.panels ?? [])]);
}

export function loadDashboards(dir: string): { file: string; json: DashboardJson }[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, json: JSON.parse(readFileSync(path.join(dir, file), "utf8")) as DashboardJson }));
}

export function dashboardQueries(dir: string): DashboardQuery[] {
  return loadDashboards(dir).flatMap(({ json }) =>
    panelsOf(json.panels).flatMap((panel) =>
      (panel.targets ?? [])
        .filter((t) => t.expr)
        .map((t) => ({
          dashboard: json.title,
          panel: panel.title ?? "",
          expr: t.expr ?? "",
          promql: toPromql(t.expr ?? ""),
          metrics: metricNames(t.expr ?? ""),
        })),
    ),
  );
}

export function variableQueries(dir: string): VariableQuery[] {
  return loadDashboards(dir).flatMap(({ json }) =>
    (json.templating?.list ?? []).flatMap((v) => {
      const match = v.definition?.match(/^label_values\((\w+),\s*(\w+)\)$/);
      return v.type === "query" && match
        ? [{ dashboard: json.title, variable: v.name, metric: match[1] ?? "", label: match[2] ?? "" }]
        : [];
    }),
  );
}
