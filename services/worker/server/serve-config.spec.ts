import assert from "node:assert/strict";
import { Code } from "../../kernel/errors.ts";
import { parseServeConfig } from "./serve-config.ts";

describe("parseServeConfig", () => {
  it("fills defaults", () => {
    const { value } = parseServeConfig({ modelDir: "/models/tiny" });
    assert.deepEqual(value, {
      modelDir: "/models/tiny",
      host: "127.0.0.1",
      port: 50051,
      drainTimeoutMs: 30_000,
    });
  });

  const bad: [string, Record<string, unknown>, RegExp][] = [
    ["a port out of range", { port: 70_000 }, /^port: /],
    ["a fractional port", { port: 1.5 }, /^port: /],
    [
      "a metrics port equal to the port",
      { port: 9000, metricsPort: 9000 },
      /^metricsPort: must differ from port$/,
    ],
    ["a negative drain timeout", { drainTimeoutMs: -1 }, /^drainTimeoutMs: /],
    ["zero threads", { threads: 0 }, /^threads: /],
    ["zero virtual engines", { engine: { virtualEngines: 0 } }, /^engine\.virtualEngines: /],
  ];
  for (const [name, fields, message] of bad) {
    it(`rejects ${name}, naming the field`, () => {
      const { error } = parseServeConfig({ modelDir: "/m", ...fields });
      assert.equal(error?.code, Code.INVALID_ARGUMENT);
      assert.match(error.message, message);
    });
  }

  it("requires the model folder", () => {
    assert.match(parseServeConfig({}).error?.message ?? "", /^modelDir: /);
  });
});
