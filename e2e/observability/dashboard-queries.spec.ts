import assert from "node:assert/strict";
import path from "node:path";
import { CHART } from "../helm/chart-tool.ts";
import { dashboardQueries, metricNames, toPromql, variableQueries } from "./dashboard-queries.ts";

describe("dashboard queries as Prometheus runs them", () => {
  it("replace Grafana's variables as Grafana does for All and a short range", () => {
    assert.equal(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax
      toPromql('sum(rate(x{model=~"$model"}[$__rate_interval])) + increase(y{model=~"${model}"}[$__range])'),
      'sum(rate(x{model=~".*"}[1m])) + increase(y{model=~".*"}[5m])',
    );
    assert.deepEqual(metricNames("a(tessera_b_total) / tessera_a_bucket + tessera_b_total"), [
      "tessera_a_bucket",
      "tessera_b_total",
    ]);
  });

  it("cover every panel of the chart's dashboards, each reading a tessera_* metric", () => {
    const queries = dashboardQueries(path.join(CHART, "dashboards"));
    assert.deepEqual(
      [...new Set(queries.map((q) => q.dashboard))].sort(),
      ["Disaggregation", "Engine", "Operator", "Overview", "Router"].map((d) => `Tessera / ${d}`),
    );
    for (const q of queries) {
      assert.ok(q.metrics.length > 0, `${q.dashboard} / ${q.panel} reads no tessera_* metric`);
      assert.doesNotMatch(q.promql, /\$/, `${q.dashboard} / ${q.panel} keeps a Grafana variable`);
    }
    assert.deepEqual(
      variableQueries(path.join(CHART, "dashboards")).map((v) => `${v.metric} ${v.label}`),
      [
        "tessera_engine_info model",
        "tessera_engine_info model",
        "tessera_engine_info model",
        "tessera_router_requests_total model",
      ],
    );
  });
});
