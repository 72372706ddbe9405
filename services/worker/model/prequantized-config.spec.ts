// config.json quantization_config: GPTQ and AWQ GEMM as their tools write it are read; every variant
// we cannot run is refused at load (describeCheckpoint) with the field and its value.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describeCheckpoint } from "./checkpoint.ts";
import { parsePrequantized } from "./prequantized-config.ts";

const GPTQ = { quant_method: "gptq", bits: 4, group_size: 128, desc_act: false, sym: true };
const AWQ = { quant_method: "awq", bits: 4, group_size: 128, zero_point: true, version: "gemm" };
const parse = (q: unknown) => parsePrequantized({ quantization_config: q });

describe("parsePrequantized", () => {
  it("reads nothing from a float checkpoint", () => {
    assert.equal(parsePrequantized({ hidden_size: 8 }), undefined);
  });

  it("reads GPTQ: format v1 (AutoGPTQ, the default) adds 1 back to the zeros, gptq_v2 does not", () => {
    assert.deepEqual(parse(GPTQ), { method: "gptq", bits: 4, groupSize: 128, zeroOffset: 1 });
    assert.deepEqual(parse({ ...GPTQ, checkpoint_format: "gptq" })?.zeroOffset, 1);
    assert.deepEqual(parse({ ...GPTQ, checkpoint_format: "gptq_v2", bits: 8, desc_act: true }), {
      method: "gptq",
      bits: 8,
      groupSize: 128,
      zeroOffset: 0,
    });
    assert.equal(parse({ ...GPTQ, group_size: -1 })?.groupSize, -1);
  });

  it("reads AWQ GEMM (AutoAWQ's config.json, and its older w_bit/q_group_size names)", () => {
    assert.deepEqual(parse(AWQ), { method: "awq", bits: 4, groupSize: 128, zeroOffset: 0 });
    assert.deepEqual(
      parse({ quant_method: "awq", w_bit: 4, q_group_size: 64, version: "GEMM", zero_point: true }),
      {
        method: "awq",
        bits: 4,
        groupSize: 64,
        zeroOffset: 0,
      },
    );
  });

  const refused: [string, unknown, RegExp][] = [
    [
      "bitsandbytes",
      { quant_method: "bitsandbytes", load_in_4bit: true },
      /quantization_config\.quant_method: "bitsandbytes"/,
    ],
    ["GPTQ 3 bits", { ...GPTQ, bits: 3 }, /quantization_config\.bits: 3 is not supported/],
    [
      "GPTQ Marlin format",
      { ...GPTQ, checkpoint_format: "marlin" },
      /quantization_config\.checkpoint_format: "marlin"/,
    ],
    ["GPTQ group size 100", { ...GPTQ, group_size: 100 }, /quantization_config\.group_size: 100/],
    ["GPTQModel dynamic", { ...GPTQ, dynamic: { "-:.*down": {} } }, /quantization_config\.dynamic/],
    ["AWQ GEMV", { ...AWQ, version: "gemv" }, /quantization_config\.version: "gemv" is not supported/],
    ["AWQ exllama", { ...AWQ, version: "exllama" }, /quantization_config\.version: "exllama"/],
    ["AWQ 8 bits", { ...AWQ, bits: 8 }, /quantization_config\.bits: 8 is not supported for AWQ/],
    ["AWQ without zero points", { ...AWQ, zero_point: false }, /quantization_config\.zero_point: false/],
  ];
  for (const [what, q, message] of refused)
    it(`refuses ${what}, naming the field`, () => assert.throws(() => parse(q), message));
});

describe("describeCheckpoint on a pre-quantized checkpoint", () => {
  const source = path.join(import.meta.dirname, "../testdata/prequantized/gptq");
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tessera-prequantized-"));
    for (const f of fs.readdirSync(source)) fs.copyFileSync(path.join(source, f), path.join(dir, f));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const setQuantization = (q: unknown) => {
    const file = path.join(dir, "config.json");
    const config = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
    fs.writeFileSync(file, JSON.stringify({ ...config, quantization_config: q }));
  };

  it("describes a GPTQ checkpoint by its float tensors' dtype (the int32 codes aside)", () => {
    assert.equal(describeCheckpoint(dir).dtype, "float16");
  });

  it("refuses an unsupported quantization_config at load, naming the field", () => {
    setQuantization({ quant_method: "awq", bits: 4, group_size: 32, zero_point: true, version: "gemv" });
    assert.throws(() => describeCheckpoint(dir), /quantization_config\.version: "gemv"/);
  });
});
