// The routing section of the router's config: key derivation, ring size, and the plugin pipeline by
// name and weight. Each plugin's own parameters are validated by the plugin (plugins/registry.ts) when
// the pipeline is built at start-up, so an error names the entry: `routing.scorers[0].epsilon: ...`.
import { z } from "zod";
import { CONSISTENT_HASH, MAX_SCORE } from "../../api/routing-plugins.ts";
import { type Result, TesseraError } from "../../kernel/errors.ts";
import type { Filter, Picker, PluginContext, Scorer } from "./plugin.ts";
import { findPlugin, pluginTypes } from "./plugins/registry.ts";

const entry = z.looseObject({ type: z.string().min(1) });

export const routingConfigSchema = z.strictObject({
  /** Points per endpoint on the hash ring: more spreads keys more evenly. */
  virtualNodes: z.int().min(1).max(4_096).default(256),
  /** Leading KV blocks that make a prompt's routing key (prompts sharing them share a home). */
  prefixBlocks: z.int().min(1).max(1_024).default(8),
  /** Request header (gRPC metadata) whose value, when sent, is the routing key instead of the prompt. */
  sessionHeader: z
    .string()
    .regex(/^[a-z0-9-]+$/, "lower-case letters, digits and dashes")
    .max(64)
    .default("x-session-id"),
  filters: z.array(entry).default([]),
  scorers: z
    .array(entry.extend({ weight: z.number().min(0).default(1) }))
    .default(() => [{ type: CONSISTENT_HASH, weight: 1 }]),
  picker: entry.default(() => ({ type: MAX_SCORE })),
});

export type RoutingConfig = z.infer<typeof routingConfigSchema>;

export interface WeightedScorer {
  scorer: Scorer;
  weight: number;
}

export interface Plugins {
  filters: Filter[];
  scorers: WeightedScorer[];
  picker: Picker;
}

/** Creates the configured plugins, validating each one's parameters. */
export function createPlugins(config: RoutingConfig, context: PluginContext): Result<Plugins> {
  const filters: Filter[] = [];
  for (const [i, { type, ...params }] of config.filters.entries()) {
    const made = create("filter", type, params, `routing.filters[${i}]`, context);
    if (made.error) return made;
    filters.push(made.value as Filter);
  }
  const scorers: WeightedScorer[] = [];
  for (const [i, { type, weight, ...params }] of config.scorers.entries()) {
    const made = create("scorer", type, params, `routing.scorers[${i}]`, context);
    if (made.error) return made;
    scorers.push({ scorer: made.value as Scorer, weight });
  }
  const { type, ...params } = config.picker;
  const picker = create("picker", type, params, "routing.picker", context);
  if (picker.error) return picker;
  return { value: { filters, scorers, picker: picker.value as Picker } };
}

function create(
  kind: "filter" | "scorer" | "picker",
  type: string,
  params: unknown,
  where: string,
  context: PluginContext,
): Result<Filter | Scorer | Picker> {
  const definition = findPlugin(kind, type);
  if (definition === undefined) {
    const known = pluginTypes(kind).join(", ");
    return {
      error: TesseraError.invalidArgument(`${where}.type`, `unknown ${kind} "${type}" (known: ${known})`),
    };
  }
  const parsed = definition.params.safeParse(params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = [where, ...(issue?.path ?? []).map(String)].join(".");
    return { error: TesseraError.invalidArgument(field, issue?.message ?? "invalid") };
  }
  // Each definition's create takes the parameters its own schema produced.
  return { value: (definition.create as (p: unknown, c: PluginContext) => Filter)(parsed.data, context) };
}
