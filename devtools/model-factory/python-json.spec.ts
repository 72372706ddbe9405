import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { formatPythonFloat, type PyJson, pyFloat, toPythonJson } from "./python-json.ts";

const reference = path.resolve(import.meta.dirname, "../../services/worker/testdata/hf-reference");

describe("python-json", () => {
  it("formats floats as Python's repr does", () => {
    const cases: [number, string][] = [
      [0, "0.0"],
      [-0, "-0.0"],
      [1, "1.0"],
      [10000, "10000.0"],
      [1e6, "1000000.0"],
      [0.02, "0.02"],
      [0.001, "0.001"],
      [0.0001, "0.0001"],
      [1e-5, "1e-05"],
      [1e-6, "1e-06"],
      [1.5e-7, "1.5e-07"],
      [1e15, "1000000000000000.0"],
      [1e16, "1e+16"],
      [1.25e100, "1.25e+100"],
      [-2.5, "-2.5"],
      [0.1 + 0.2, "0.30000000000000004"],
      [Number.POSITIVE_INFINITY, "Infinity"],
    ];
    for (const [x, want] of cases) assert.equal(formatPythonFloat(x), want, String(x));
  });

  it("matches JSON.stringify for plain values", () => {
    const v = { b: [1, 'x\n"é"', { c: null, d: [] }], a: true, e: {}, f: [[1, 2]] };
    assert.equal(toPythonJson(v), JSON.stringify(v, null, 2));
  });

  it("keeps a Map's key order, integer-like keys included", () => {
    const m = new Map<string, PyJson>([
      ["b", 1],
      ["10", 2],
      ["a", new Map()],
    ]);
    assert.equal(toPythonJson({ m }), '{\n  "m": {\n    "b": 1,\n    "10": 2,\n    "a": {}\n  }\n}');
  });

  it("sorts keys, writes marked floats and big integers", () => {
    const v: PyJson = { z: pyFloat(1), a: 1e-6, m: BigInt(1e30) };
    assert.equal(
      toPythonJson(v, { sortKeys: true }),
      '{\n  "a": 1e-06,\n  "m": 1000000000000000019884624838656,\n  "z": 1.0\n}',
    );
  });

  it("reproduces a reference config.json byte for byte", () => {
    const text = readFileSync(path.join(reference, "tiny-mixtral/config.json"), "utf8");
    const parsed = JSON.parse(text) as Record<string, PyJson>;
    const floats = [
      "attention_dropout",
      "initializer_range",
      "rms_norm_eps",
      "router_aux_loss_coef",
      "router_jitter_noise",
    ];
    for (const k of floats) parsed[k] = pyFloat(parsed[k] as number);
    parsed["rope_parameters"] = { rope_theta: pyFloat(1e6), rope_type: "default" };
    assert.equal(`${toPythonJson(parsed, { sortKeys: true })}\n`, text);
  });
});
