import assert from "node:assert/strict";
import {
  dialedPeers,
  globalRank,
  linkPeers,
  memberOf,
  nextStage,
  stageLayers,
  tensorPeers,
} from "./group-layout.ts";

describe("group layout", () => {
  const tp2pp2 = { stages: 2, tensorSize: 2 };

  it("numbers members stage-major, as the operator's placement does", () => {
    assert.equal(globalRank(tp2pp2, { stage: 1, rank: 0 }), 2);
    assert.deepEqual(memberOf(tp2pp2, 3), { stage: 1, rank: 1 });
    assert.deepEqual(tensorPeers(tp2pp2, 2), [3]);
    assert.equal(nextStage(tp2pp2, 1), 3);
    assert.equal(nextStage(tp2pp2, 3), undefined);
  });

  it("links the coordinator to everyone, tensor ranks pairwise and stages rank to rank", () => {
    assert.deepEqual(linkPeers(tp2pp2, 0), [1, 2, 3]);
    assert.deepEqual(linkPeers(tp2pp2, 1), [0, 3]);
    assert.deepEqual(linkPeers(tp2pp2, 2), [0, 3]);
    assert.deepEqual(linkPeers(tp2pp2, 3), [0, 1, 2]);
    assert.deepEqual(linkPeers({ stages: 3, tensorSize: 1 }, 1), [0, 2]);
  });

  it("has every link opened by exactly one side, the lower rank", () => {
    for (const layout of [tp2pp2, { stages: 3, tensorSize: 4 }, { stages: 1, tensorSize: 2 }]) {
      const n = layout.stages * layout.tensorSize;
      for (let a = 0; a < n; a++)
        for (const b of linkPeers(layout, a)) {
          assert.ok(linkPeers(layout, b).includes(a), `link ${a}-${b} is known to both`);
          assert.equal(dialedPeers(layout, a).includes(b), a < b);
        }
    }
  });

  it("splits layers into contiguous stages like the operator, larger first", () => {
    assert.deepEqual(
      [0, 1, 2].map((s) => stageLayers(10, 3, s)),
      [
        { start: 0, end: 4 },
        { start: 4, end: 7 },
        { start: 7, end: 10 },
      ],
    );
  });
});
