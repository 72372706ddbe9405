import assert from "node:assert/strict";
import { splitLayers } from "./layer-ranges.ts";

describe("layer ranges", () => {
  const cases: [number, number, [number, number][]][] = [
    [4, 1, [[0, 4]]],
    [
      4,
      2,
      [
        [0, 2],
        [2, 4],
      ],
    ],
    [
      32,
      3,
      [
        [0, 11],
        [11, 22],
        [22, 32],
      ],
    ],
    [
      5,
      4,
      [
        [0, 2],
        [2, 3],
        [3, 4],
        [4, 5],
      ],
    ],
    [
      3,
      3,
      [
        [0, 1],
        [1, 2],
        [2, 3],
      ],
    ],
  ];
  for (const [layers, stages, expected] of cases) {
    it(`${layers} layers in ${stages} stages`, () => {
      assert.deepEqual(
        splitLayers(layers, stages).map((r) => [r.start, r.end]),
        expected,
      );
    });
  }

  it("refuses more stages than layers", () => {
    assert.throws(() => splitLayers(2, 3), /cannot split 2 layers into 3 stages/);
  });
});
