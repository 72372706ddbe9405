import assert from "node:assert/strict";
import { candidate, load, pluginContext, request } from "../testing/candidates.ts";
import { createPlugins, routingConfigSchema } from "./routing-config.ts";
import { type RoutingObserver, RoutingPipeline } from "./routing-pipeline.ts";

function pipeline(raw: unknown, observer?: RoutingObserver): RoutingPipeline {
  const plugins = createPlugins(routingConfigSchema.parse(raw), pluginContext());
  if (plugins.error) throw plugins.error;
  return new RoutingPipeline(plugins.value, observer);
}

describe("RoutingPipeline", () => {
  it("picks the home when it has room, and reports the pick as home", () => {
    const pick = pipeline({}).pick(request, [candidate("home"), candidate("b")]);
    assert.equal(pick?.candidate.name, "home");
    assert.equal(pick?.home, true);
  });

  it("sums weighted scores: a heavy load scorer overrides the ring", () => {
    const candidates = [candidate("home", { load: load({ waiting: 9 }) }), candidate("b", { load: load() })];
    const pick = pipeline({
      scorers: [
        { type: "consistent-hash", weight: 1 },
        { type: "load", weight: 3 },
      ],
    }).pick(request, candidates);
    assert.equal(pick?.candidate.name, "b");
    assert.equal(pick?.home, false);
  });

  it("skips a filter that would leave no endpoint", () => {
    const pick = pipeline({ filters: [{ type: "load-limit", maxWaiting: 0 }] }).pick(request, [
      candidate("a", { load: load({ waiting: 3 }) }),
    ]);
    assert.equal(pick?.candidate.name, "a");
  });

  it("times every plugin and says which scorers agreed with the pick", () => {
    const stages: string[] = [];
    const picks: [readonly string[], boolean][] = [];
    const observer = {
      stage: (p: string) => stages.push(p),
      picked: (a: readonly string[], h: boolean) => picks.push([a, h]),
    };
    pipeline(
      {
        filters: [{ type: "load-limit" }],
        scorers: [{ type: "consistent-hash", weight: 2 }, { type: "least-latency" }],
      },
      observer,
    ).pick(request, [candidate("home", { ttftMs: 50 }), candidate("b", { ttftMs: 5 })]);
    assert.deepEqual(stages, ["load-limit", "consistent-hash", "least-latency", "max-score"]);
    assert.deepEqual(picks, [[["consistent-hash"], true]]);
  });

  it("has nothing to pick from an empty list", () => {
    assert.equal(pipeline({}).pick(request, []), undefined);
  });
});
