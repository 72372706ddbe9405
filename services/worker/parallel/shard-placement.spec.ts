import assert from "node:assert/strict";
import {
  defaultVirtualEngines,
  groupKey,
  isCoordinator,
  layerCoverageProblem,
  type ShardPlacement,
  selfRank,
  shardSpec,
} from "./shard-placement.ts";

const placement = (
  stage: number,
  tensorRank: number,
  layers?: { start: number; end: number },
): ShardPlacement => ({
  stage,
  stages: 2,
  tensorRank,
  tensorSize: 2,
  layers,
  peers: ["a:1", "b:1", "c:1", "d:1"],
  formationTimeoutMs: 1000,
  stepTimeoutMs: 1000,
  microBatches: 1,
});

describe("shard placement", () => {
  it("keeps one batch in flight per pipeline stage by default (virtual engines)", () => {
    assert.equal(defaultVirtualEngines({ stages: 2 }), 2);
    assert.equal(defaultVirtualEngines({ stages: 4 }), 4);
    assert.equal(defaultVirtualEngines({ stages: 1 }), 1, "tensor parallelism alone keeps one");
  });

  it("ranks members stage-major; rank 0 coordinates", () => {
    assert.equal(selfRank(placement(1, 1)), 3);
    assert.ok(isCoordinator(placement(0, 0)));
    assert.ok(!isCoordinator(placement(0, 1)));
  });

  it("splits layers evenly unless told, and keys the group by weights, shape and pool", () => {
    assert.deepEqual(shardSpec(placement(1, 0), 5), {
      layers: { start: 3, end: 5 },
      tensor: { rank: 0, size: 2 },
    });
    assert.deepEqual(shardSpec(placement(1, 0, { start: 1, end: 5 }), 5).layers, { start: 1, end: 5 });
    assert.equal(groupKey(placement(0, 0), "abc", { numBlocks: 10, blockSize: 16 }), "abc|pp2|tp2|kv10x16");
  });

  it("checks that the members' layers tile the model", () => {
    const layout = { stages: 2, tensorSize: 2 };
    const report = (layerStart: number, layerEnd: number) => ({ layerStart, layerEnd });
    const good = new Map([
      [0, report(0, 2)],
      [1, report(0, 2)],
      [2, report(2, 4)],
      [3, report(2, 4)],
    ]);
    assert.equal(layerCoverageProblem(layout, good, 4), undefined);
    assert.match(layerCoverageProblem(layout, good, 5)!, /end at layer 4/);
    assert.match(
      layerCoverageProblem(layout, new Map([...good, [3, report(3, 4)]]), 4)!,
      /stage 1 do not hold/,
    );
    assert.match(
      layerCoverageProblem(layout, new Map([...good, [2, report(1, 4)], [3, report(1, 4)]]), 4)!,
      /starts at layer 1/,
    );
  });
});
