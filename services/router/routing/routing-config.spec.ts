import assert from "node:assert/strict";
import { pluginContext } from "../testing/candidates.ts";
import { createPlugins, routingConfigSchema } from "./routing-config.ts";

const parse = (raw: unknown) => routingConfigSchema.parse(raw);

describe("routing config", () => {
  it("defaults to consistent hashing with bounded loads and the max-score picker", () => {
    const config = parse({});
    const plugins = createPlugins(config, pluginContext());
    assert.equal(plugins.error, undefined);
    assert.deepEqual(
      plugins.value?.scorers.map((s) => [s.scorer.type, s.weight]),
      [["consistent-hash", 1]],
    );
    assert.equal(plugins.value?.picker.type, "max-score");
    assert.equal(config.prefixBlocks, 8);
  });

  it("builds a named, weighted pipeline", () => {
    const plugins = createPlugins(
      parse({
        filters: [{ type: "load-limit", maxWaiting: 8 }],
        scorers: [
          { type: "consistent-hash", weight: 2, epsilon: 0.5 },
          { type: "load", weight: 1 },
        ],
        picker: { type: "power-of-two" },
      }),
      pluginContext(),
    );
    assert.deepEqual(
      plugins.value?.scorers.map((s) => s.weight),
      [2, 1],
    );
    assert.equal(plugins.value?.filters[0]?.type, "load-limit");
  });

  it("names the entry and the field of a bad parameter or an unknown plugin", () => {
    const bad = createPlugins(
      parse({ scorers: [{ type: "consistent-hash", epsilon: -1 }] }),
      pluginContext(),
    );
    assert.match(bad.error?.message ?? "", /^routing\.scorers\[0\]\.epsilon: /);
    const unknown = createPlugins(parse({ picker: { type: "lottery" } }), pluginContext());
    assert.match(
      unknown.error?.message ?? "",
      /^routing\.picker\.type: unknown picker "lottery" \(known: .*max-score/,
    );
    const typo = createPlugins(parse({ filters: [{ type: "load-limit", maxWaitng: 3 }] }), pluginContext());
    assert.match(typo.error?.message ?? "", /^routing\.filters\[0\]/);
  });
});
