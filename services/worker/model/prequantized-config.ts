// A pre-quantized Hugging Face checkpoint, as config.json's `quantization_config` describes it: the
// two common weight-only formats, GPTQ (AutoGPTQ / GPTQModel / optimum) and AWQ (AutoAWQ, GEMM layout).
// Only what MatMulNBits can run without turning codes back into floats is accepted; anything else is
// refused at load with the field and value that rule it out (prequantized-repack.ts says how each
// layout maps onto MatMulNBits's).
import { TesseraError } from "../../kernel/errors.ts";

export interface PrequantizedFormat {
  method: "gptq" | "awq";
  bits: 4 | 8;
  /** Input features per scale/zero group; -1 (one group over all input features) is kept as -1. */
  groupSize: number;
  /** GPTQ v1 ("gptq", AutoGPTQ's format) stores each zero point minus one; v2 and AWQ store it as is. */
  zeroOffset: 0 | 1;
}

const FIELD = "config.json quantization_config";

/** The fields read (GPTQ: transformers' GPTQConfig, GPTQModel; AWQ: AwqConfig, AutoAWQ). */
interface RawConfig {
  quant_method?: unknown;
  bits?: unknown;
  w_bit?: unknown;
  group_size?: unknown;
  q_group_size?: unknown;
  desc_act?: unknown;
  checkpoint_format?: unknown;
  format?: unknown;
  dynamic?: unknown;
  version?: unknown;
  zero_point?: unknown;
}

/** undefined for a float checkpoint (no quantization_config). */
export function parsePrequantized(config: unknown): PrequantizedFormat | undefined {
  if (typeof config !== "object" || config === null) return undefined;
  const q = (config as { quantization_config?: unknown }).quantization_config;
  if (q === undefined || q === null) return undefined;
  if (typeof q !== "object" || Array.isArray(q)) throw refuse("", "must be an object");
  const c = q as RawConfig;
  const method = c.quant_method;
  if (method === "gptq") return gptq(c);
  if (method === "awq") return awq(c);
  throw refuse(".quant_method", `${JSON.stringify(method)} is not supported (supported: "gptq", "awq")`);
}

function gptq(c: RawConfig): PrequantizedFormat {
  const bits = c.bits;
  if (bits !== 4 && bits !== 8)
    throw refuse(".bits", `${JSON.stringify(bits)} is not supported for GPTQ (4 or 8)`);
  const format = c.checkpoint_format ?? c.format ?? "gptq";
  if (format !== "gptq" && format !== "gptq_v2") {
    const field = c.checkpoint_format !== undefined ? ".checkpoint_format" : ".format";
    throw refuse(field, `${JSON.stringify(format)} is not supported (supported: "gptq", "gptq_v2")`);
  }
  // GPTQModel's per-module overrides (other bits or group sizes for some layers) are not read.
  if (c.dynamic !== undefined && c.dynamic !== null && Object.keys(c.dynamic as object).length > 0) {
    throw refuse(".dynamic", "per-module overrides are not supported");
  }
  // desc_act (act-order) is accepted here: what matters is each matrix's g_idx, checked when it is
  // read (prequantized-repack.ts), since GPTQ with static_groups stores contiguous groups anyway.
  if (c.desc_act !== undefined && typeof c.desc_act !== "boolean")
    throw refuse(".desc_act", "must be a boolean");
  return { method: "gptq", bits, groupSize: groupSize(c.group_size), zeroOffset: format === "gptq" ? 1 : 0 };
}

function awq(c: RawConfig): PrequantizedFormat {
  // AutoAWQ writes bits/group_size into config.json; its older quant_config.json said w_bit/q_group_size.
  const bits = c.bits ?? c.w_bit;
  if (bits !== 4) throw refuse(".bits", `${JSON.stringify(bits)} is not supported for AWQ (4)`);
  const version = c.version ?? "gemm";
  if (typeof version !== "string" || version.toLowerCase() !== "gemm") {
    throw refuse(
      ".version",
      `${JSON.stringify(version)} is not supported (supported: "gemm"; the gemv, exllama, marlin and ipex layouts are not read)`,
    );
  }
  const zeroPoint = c.zero_point ?? true;
  if (zeroPoint !== true) throw refuse(".zero_point", `${JSON.stringify(zeroPoint)} is not supported (true)`);
  return { method: "awq", bits: 4, groupSize: groupSize(c.group_size ?? c.q_group_size), zeroOffset: 0 };
}

/** -1, or a power of two of at least 16 (MatMulNBits's block sizes; 32, 64 and 128 in practice). */
function groupSize(v: unknown): number {
  if (v === -1) return -1;
  if (typeof v === "number" && Number.isInteger(v) && v >= 16 && (v & (v - 1)) === 0) return v;
  throw refuse(".group_size", `${JSON.stringify(v)} is not supported (-1 or a power of two of at least 16)`);
}

function refuse(field: string, why: string): TesseraError {
  return TesseraError.invalidArgument(`${FIELD}${field}`, why);
}
