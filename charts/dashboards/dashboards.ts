// The dashboards the chart ships (charts/tessera/dashboards/<name>.json, one ConfigMap each).
import { disaggregation } from "./disaggregation.ts";
import { engine } from "./engine.ts";
import { operator } from "./operator.ts";
import { overview } from "./overview.ts";
import type { DashboardSpec } from "./panel-kit.ts";
import { router } from "./router.ts";

export const DASHBOARDS: Record<string, DashboardSpec> = {
  overview,
  engine,
  disaggregation,
  router,
  operator,
};
