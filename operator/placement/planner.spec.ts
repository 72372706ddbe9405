import assert from "node:assert/strict";
import { MODEL_REF, modelSpec, poolSpec, pools } from "../testing/fixtures.ts";
import { type PlacementPlan, planPlacement, templateInput } from "./planner.ts";
import { canonicalJson } from "./revision.ts";

const summary = (plan: PlacementPlan) =>
  plan.groups.map((g) => `${g.role}/${g.replica}@${g.pool}:${g.shards.length}`);

describe("placement planner", () => {
  it("gives a colocated TP=PP=1 model one single-pod group per replica", () => {
    const plan = planPlacement({
      model: MODEL_REF,
      spec: modelSpec({ replicas: 3 }),
      pools: pools({ default: {} }),
    });
    assert.deepEqual(summary(plan), ["both/0@default:1", "both/1@default:1", "both/2@default:1"]);
    const rev = plan.revisions.both!;
    const shard = plan.groups[0]!.shards[0]!;
    assert.deepEqual(shard, {
      stage: 0,
      rank: 0,
      globalRank: 0,
      numStages: 1,
      tensorSize: 1,
      worldSize: 1,
      podName: `tiny-both-0-s0-t0-${rev}`,
      hostname: `both-0-s0-t0-${rev}`,
      peers: [`both-0-s0-t0-${rev}.tiny-workers.ml.svc:50051`],
    });
    assert.deepEqual(plan.shortfalls, []);
    assert.equal(plan.podsPerGroup, 1);
  });

  it("splits a replica into pipeline stages x tensor ranks with layer ranges and ordered peers", () => {
    const spec = modelSpec({ model: { numLayers: 10 }, parallelism: { tensor: 2, pipeline: 2 } });
    const plan = planPlacement({ model: MODEL_REF, spec, pools: pools({ default: {} }) });
    const [group] = plan.groups;
    assert.equal(plan.groups.length, 1);
    assert.deepEqual(
      group!.shards.map((s) => [s.stage, s.rank, s.globalRank, s.layers?.start, s.layers?.end, s.worldSize]),
      [
        [0, 0, 0, 0, 5, 4],
        [0, 1, 1, 0, 5, 4],
        [1, 0, 2, 5, 10, 4],
        [1, 1, 3, 5, 10, 4],
      ],
    );
    const rev = plan.revisions.both!;
    assert.deepEqual(group!.shards[3]!.peers, [
      `both-0-s0-t0-${rev}.tiny-workers.ml.svc:50051`,
      `both-0-s0-t1-${rev}.tiny-workers.ml.svc:50051`,
      `both-0-s1-t0-${rev}.tiny-workers.ml.svc:50051`,
      `both-0-s1-t1-${rev}.tiny-workers.ml.svc:50051`,
    ]);
    assert.ok(group!.shards.every((s) => s.peers === group!.shards[0]!.peers));
  });

  const capacityCases: {
    name: string;
    spec: Parameters<typeof modelSpec>[0];
    pools: Parameters<typeof pools>[0];
    groups: string[];
    shortfalls: string[];
    surge: Record<string, boolean>;
  }[] = [
    {
      name: "disaggregated roles in their own pools",
      spec: {
        replicas: 2,
        serving: { mode: "disaggregated", prefillReplicas: 1 },
        pools: { prefill: "big" },
        kvTransfer: { redis: { address: "redis:6379" } },
      },
      pools: { default: {}, big: {} },
      groups: ["decode/0@default:1", "decode/1@default:1", "prefill/0@big:1"],
      shortfalls: [],
      surge: { decode: true, prefill: true },
    },
    {
      name: "whole groups only, when the pool is nearly full",
      spec: { replicas: 4, parallelism: { tensor: 2 } },
      pools: { default: { maxPods: 5 } },
      groups: ["both/0@default:2", "both/1@default:2"],
      shortfalls: ["both default 2/4 InsufficientCapacity"],
      surge: { both: false },
    },
    {
      name: "the pods of other models counted against the pool",
      spec: { replicas: 3 },
      pools: { default: { maxPods: 4, usedByOthers: 2 } },
      groups: ["both/0@default:1", "both/1@default:1"],
      shortfalls: ["both default 2/3 InsufficientCapacity"],
      surge: { both: false },
    },
    {
      name: "roles taking turns in a shared tight pool",
      spec: {
        replicas: 3,
        serving: { mode: "disaggregated", prefillReplicas: 3 },
        kvTransfer: { redis: { address: "redis:6379" } },
      },
      pools: { default: { maxPods: 3 } },
      groups: ["decode/0@default:1", "decode/1@default:1", "prefill/0@default:1"],
      shortfalls: ["decode default 2/3 InsufficientCapacity", "prefill default 1/3 InsufficientCapacity"],
      surge: { decode: false, prefill: false },
    },
    {
      name: "nothing for a role whose pool does not exist",
      spec: { replicas: 2, pools: { default: "gpu" } },
      pools: { default: {} },
      groups: [],
      shortfalls: ["both gpu 0/2 PoolNotFound"],
      surge: {},
    },
    {
      name: "no groups and no shortfall at zero replicas",
      spec: { replicas: 0 },
      pools: { default: { maxPods: 1 } },
      groups: [],
      shortfalls: [],
      surge: { both: true },
    },
  ];
  for (const c of capacityCases) {
    it(`places ${c.name}`, () => {
      const plan = planPlacement({ model: MODEL_REF, spec: modelSpec(c.spec), pools: pools(c.pools) });
      assert.deepEqual(summary(plan), c.groups);
      assert.deepEqual(
        plan.shortfalls.map((s) => `${s.role} ${s.pool} ${s.placed}/${s.wanted} ${s.reason}`),
        c.shortfalls,
      );
      assert.deepEqual(plan.surgeRoom, c.surge);
    });
  }

  it("changes the revision with what shapes the pods, not with replica counts or routing", () => {
    const rev = (spec: Parameters<typeof modelSpec>[0], poolOverrides = {}) =>
      planPlacement({ model: MODEL_REF, spec: modelSpec(spec), pools: pools({ default: poolOverrides }) })
        .revisions.both;
    const base = rev({});
    assert.equal(rev({ replicas: 5 }), base);
    assert.equal(rev({ routing: { strategy: "round-robin" } }), base);
    assert.notEqual(rev({ engine: { blockSize: 32 } }), base);
    assert.notEqual(rev({ model: { path: "/models/other" } }), base);
    assert.notEqual(rev({}, { image: "tessera:2" }), base);
    // A new served name rolls the pods (they serve it); spelling out the default does not.
    assert.notEqual(rev({ model: { path: "/models/tiny", servedName: "q2" } }), base);
    assert.equal(rev({ model: { path: "/models/tiny", servedName: MODEL_REF.name } }), base);
    // Quantization rolls the pods; none, its default, hashes as a model made before the field.
    assert.notEqual(rev({ model: { path: "/models/tiny", quantization: "int4" } }), base);
    assert.notEqual(
      rev({ model: { path: "/models/tiny", quantization: "int4" } }),
      rev({ model: { path: "/models/tiny", quantization: "int8" } }),
    );
    assert.equal(rev({ model: { path: "/models/tiny", quantization: "none" } }), base);
    const input = canonicalJson(templateInput(MODEL_REF, modelSpec({}), "both", poolSpec()));
    assert.doesNotMatch(input, /quantization/);
  });
});
