// A small builder for Grafana dashboards (JSON model of current Grafana, schemaVersion 39+): rows of
// time series, stat, table and text panels laid out left to right on the 24-column grid, every query
// on the dashboard's Prometheus data source variable. Definitions stay short and uniform; `npm run
// chart` writes the JSON the chart ships.

export interface Query {
  expr: string;
  legend?: string;
}

interface PanelBase {
  title: string;
  description: string;
  /** Width in grid columns (24 is the whole row). */
  width: number;
  height?: number;
}

export type Panel =
  | (PanelBase & { kind: "timeseries"; unit: string; queries: Query[]; stack?: boolean })
  | (PanelBase & { kind: "stat"; unit: string; queries: Query[] })
  | (PanelBase & { kind: "table"; queries: Query[] })
  | (PanelBase & { kind: "text"; markdown: string });

export interface Row {
  title: string;
  panels: Panel[];
}

export interface DashboardSpec {
  uid: string;
  title: string;
  description: string;
  /** The metric whose `model` label values fill the $model variable; none: no variable. */
  modelsFrom?: string;
  rows: Row[];
}

// Grafana's own variable syntax, not a template string.
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana interpolates ${datasource}
const DATASOURCE = { type: "prometheus", uid: "${datasource}" };

export const timeseries = (
  title: string,
  description: string,
  unit: string,
  queries: Query[],
  width = 12,
): Panel => ({ kind: "timeseries", title, description, unit, queries, width });

export const stat = (title: string, description: string, unit: string, expr: string, width = 6): Panel => ({
  kind: "stat",
  title,
  description,
  unit,
  queries: [{ expr }],
  width,
});

export const table = (title: string, description: string, expr: string, width = 24): Panel => ({
  kind: "table",
  title,
  description,
  queries: [{ expr }],
  width,
});

export const text = (title: string, markdown: string, width = 24, height = 3): Panel => ({
  kind: "text",
  title,
  description: "",
  markdown,
  width,
  height,
});

/** p50, p95 and p99 of a histogram, summed over `by` (besides le). */
export function quantiles(metric: string, selector: string, by = ""): Query[] {
  const groups = by ? `le, ${by}` : "le";
  const legend = by ? `{{${by}}} ` : "";
  return [0.5, 0.95, 0.99].map((q) => ({
    expr: `histogram_quantile(${q}, sum by (${groups}) (rate(${metric}_bucket${selector}[$__rate_interval])))`,
    legend: `${legend}p${q * 100}`,
  }));
}

function targets(queries: Query[], table: boolean) {
  return queries.map((q, i) => ({
    datasource: DATASOURCE,
    refId: String.fromCharCode(65 + i),
    editorMode: "code",
    expr: q.expr,
    legendFormat: q.legend ?? "__auto",
    range: !table,
    instant: table,
    ...(table ? { format: "table" } : {}),
  }));
}

function panelJson(panel: Panel, id: number, gridPos: { h: number; w: number; x: number; y: number }) {
  const common = { id, title: panel.title, description: panel.description, gridPos };
  switch (panel.kind) {
    case "timeseries":
      return {
        ...common,
        type: "timeseries",
        datasource: DATASOURCE,
        targets: targets(panel.queries, false),
        fieldConfig: {
          defaults: {
            unit: panel.unit,
            min: 0,
            custom: {
              drawStyle: "line",
              lineWidth: 1,
              fillOpacity: 10,
              showPoints: "never",
              spanNulls: false,
              stacking: { mode: panel.stack ? "normal" : "none", group: "A" },
            },
          },
          overrides: [],
        },
        options: {
          legend: { displayMode: "list", placement: "bottom", showLegend: true },
          tooltip: { mode: "multi", sort: "desc" },
        },
      };
    case "stat":
      return {
        ...common,
        type: "stat",
        datasource: DATASOURCE,
        targets: targets(panel.queries, false),
        fieldConfig: { defaults: { unit: panel.unit }, overrides: [] },
        options: {
          reduceOptions: { calcs: ["lastNotNull"], fields: "", values: false },
          colorMode: "value",
          graphMode: "area",
          textMode: "auto",
          justifyMode: "auto",
          orientation: "auto",
        },
      };
    case "table":
      return {
        ...common,
        type: "table",
        datasource: DATASOURCE,
        targets: targets(panel.queries, true),
        fieldConfig: { defaults: {}, overrides: [] },
        options: { showHeader: true, cellHeight: "sm" },
        transformations: [{ id: "organize", options: { excludeByName: { Time: true, Value: true } } }],
      };
    case "text":
      return { ...common, type: "text", options: { mode: "markdown", content: panel.markdown } };
    default:
      return assertNever(panel);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected panel ${JSON.stringify(value)}`);
}

function variables(spec: DashboardSpec) {
  const list: Record<string, unknown>[] = [
    {
      name: "datasource",
      label: "Data source",
      type: "datasource",
      query: "prometheus",
      current: {},
      hide: 0,
      refresh: 1,
      regex: "",
      includeAll: false,
      multi: false,
      options: [],
    },
  ];
  if (spec.modelsFrom) {
    const query = `label_values(${spec.modelsFrom}, model)`;
    list.push({
      name: "model",
      label: "Model",
      type: "query",
      datasource: DATASOURCE,
      definition: query,
      query: { qryType: 1, query, refId: "PrometheusVariableQueryEditor-VariableQuery" },
      refresh: 2,
      includeAll: true,
      multi: true,
      allValue: ".*",
      current: {},
      sort: 1,
      hide: 0,
      options: [],
      regex: "",
    });
  }
  return list;
}

/** The dashboard's JSON model: rows stacked top to bottom, panels wrapping at 24 columns. */
export function dashboardJson(spec: DashboardSpec): Record<string, unknown> {
  const panels: Record<string, unknown>[] = [];
  let id = 1;
  let y = 0;
  for (const row of spec.rows) {
    panels.push({
      id: id++,
      type: "row",
      title: row.title,
      collapsed: false,
      panels: [],
      gridPos: { h: 1, w: 24, x: 0, y },
    });
    y += 1;
    let x = 0;
    let rowHeight = 0;
    for (const panel of row.panels) {
      const h = panel.height ?? (panel.kind === "stat" ? 4 : 8);
      if (x + panel.width > 24) {
        y += rowHeight;
        x = 0;
        rowHeight = 0;
      }
      panels.push(panelJson(panel, id++, { h, w: panel.width, x, y }));
      x += panel.width;
      rowHeight = Math.max(rowHeight, h);
    }
    y += rowHeight;
  }
  return {
    uid: spec.uid,
    title: spec.title,
    description: spec.description,
    tags: ["tessera"],
    editable: true,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    time: { from: "now-1h", to: "now" },
    refresh: "30s",
    timezone: "browser",
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: "grafana", uid: "-- Grafana --" },
          enable: true,
          hide: true,
          iconColor: "rgba(0, 211, 255, 1)",
          name: "Annotations & Alerts",
          type: "dashboard",
        },
      ],
    },
    links: [
      {
        title: "Tessera",
        type: "dashboards",
        tags: ["tessera"],
        asDropdown: true,
        includeVars: true,
        keepTime: true,
      },
    ],
    templating: { list: variables(spec) },
    panels,
  };
}
