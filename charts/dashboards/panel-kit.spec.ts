import assert from "node:assert/strict";
import { DASHBOARDS } from "./dashboards.ts";
import { dashboardJson, quantiles } from "./panel-kit.ts";

interface PanelJson {
  id: number;
  type: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { uid: string };
  targets?: { expr: string; refId: string }[];
}

describe("Grafana dashboards (panel kit)", () => {
  const built = Object.entries(DASHBOARDS).map(([name, spec]) => ({ name, json: dashboardJson(spec) }));

  it("are the five the chart promises, each with a unique uid and title", () => {
    assert.deepEqual(
      built.map((d) => d.json["title"]),
      [
        "Tessera / Overview",
        "Tessera / Engine",
        "Tessera / Disaggregation",
        "Tessera / Router",
        "Tessera / Operator",
      ],
    );
    assert.equal(new Set(built.map((d) => d.json["uid"])).size, built.length);
  });

  it("lay panels out on the 24-column grid without overlap, with unique ids", () => {
    for (const { name, json } of built) {
      const panels = json["panels"] as PanelJson[];
      assert.equal(new Set(panels.map((p) => p.id)).size, panels.length, name);
      const cells = new Set<string>();
      for (const { gridPos: g, id } of panels) {
        assert.ok(g.x >= 0 && g.x + g.w <= 24, `${name} panel ${id} leaves the grid`);
        for (let x = g.x; x < g.x + g.w; x++)
          for (let y = g.y; y < g.y + g.h; y++) {
            assert.ok(!cells.has(`${x},${y}`), `${name} panel ${id} overlaps at ${x},${y}`);
            cells.add(`${x},${y}`);
          }
      }
    }
  });

  it("query the dashboard's Prometheus data source variable, one refId per target", () => {
    for (const { name, json } of built)
      for (const panel of json["panels"] as PanelJson[]) {
        if (panel.type === "row" || panel.type === "text") continue;
        // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax
        assert.equal(panel.datasource?.uid, "${datasource}", `${name} panel ${panel.id}`);
        const refIds = (panel.targets ?? []).map((t) => t.refId);
        assert.ok(refIds.length > 0 && new Set(refIds).size === refIds.length, `${name} panel ${panel.id}`);
      }
  });

  it("build histogram quantiles over le and the grouping labels", () => {
    assert.deepEqual(quantiles("tessera_x_seconds", '{model=~"$model"}', "op")[1], {
      expr: 'histogram_quantile(0.95, sum by (le, op) (rate(tessera_x_seconds_bucket{model=~"$model"}[$__rate_interval])))',
      legend: "{{op}} p95",
    });
  });
});
