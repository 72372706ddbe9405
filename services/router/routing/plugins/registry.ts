// The one list of routing plugins. A new plugin is one file exporting its definition, plus one line here.
import type { PluginDefinition } from "../plugin.ts";
import { consistentHashScorer } from "./consistent-hash-scorer.ts";
import { latencyScorer } from "./latency-scorer.ts";
import { loadLimitFilter } from "./load-limit-filter.ts";
import { loadScorer } from "./load-scorer.ts";
import { maxScorePicker, powerOfTwoPicker, randomPicker, roundRobinPicker } from "./pickers.ts";

export const PLUGINS: readonly PluginDefinition[] = [
  loadLimitFilter,
  consistentHashScorer,
  loadScorer,
  latencyScorer,
  maxScorePicker,
  roundRobinPicker,
  randomPicker,
  powerOfTwoPicker,
];

export function findPlugin(kind: PluginDefinition["kind"], type: string): PluginDefinition | undefined {
  return PLUGINS.find((p) => p.kind === kind && p.type === type);
}

export function pluginTypes(kind: PluginDefinition["kind"]): string[] {
  return PLUGINS.filter((p) => p.kind === kind).map((p) => p.type);
}
