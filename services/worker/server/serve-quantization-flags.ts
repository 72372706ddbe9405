// `tessera serve --quantization int8|int4` with its block size and scheme (serve-flags.ts), or the
// variables the operator sets instead (TESSERA_QUANTIZATION, from the InferenceModel's
// spec.model.quantization), made the engine's QuantOptions (model/quantize-blocks.ts). A block size
// or scheme without a quantization to apply it to is refused rather than ignored; errors name the flag
// or variable the bad value came from.
import { type Result, TesseraError } from "../../kernel/errors.ts";
import { blockSizeProblem, type QuantBits, type QuantOptions } from "../model/quantize-blocks.ts";

/**
 * The block size when none is given, per bits: 128, measured (`npm run bench -- quantization` and
 * `-- quality`, base preset and the trained reference model, MatMulNBits accuracy level 4). Against
 * blocks of 32, a 128-token prefill takes ~20% less CPU at int4 (~70 vs ~90 ms, 1 thread) and ~12%
 * less at int8, batch-1 decode ~10% less, for held-out perplexity x1.0046 of float32's at int4
 * (x1.0029 at 32) and x1.0001 at int8. Blocks of 256 were ~5-10% faster still at the same quality
 * but divide fewer hidden sizes (Qwen2-0.5B's 896): a tied embedding whose rows are not whole blocks
 * cannot be read from the LM head's codes and would be kept as floats beside them. 128 is also the
 * group size of GPTQ and AWQ checkpoints.
 */
export const DEFAULT_QUANTIZATION_BLOCK_SIZE: Readonly<Record<QuantBits, number>> = { 8: 128, 4: 128 };

/** `--quantization int8|int4` with neither a block size nor a scheme given. */
export function defaultQuantization(bits: QuantBits): QuantOptions {
  return { bits, blockSize: DEFAULT_QUANTIZATION_BLOCK_SIZE[bits], symmetric: true };
}

type Given = {
  quantization: "none" | "int8" | "int4";
  quantizationBlockSize: number | undefined;
  quantizationScheme: "symmetric" | "asymmetric" | undefined;
};

/** The quantization to apply, undefined for none. */
export function quantizationInput(
  given: Given,
  from: (key: keyof Given) => string,
): Result<QuantOptions | undefined> {
  const { quantization, quantizationBlockSize: blockSize, quantizationScheme: scheme } = given;
  if (quantization === "none") {
    const stray = (["quantizationBlockSize", "quantizationScheme"] as const).find(
      (k) => given[k] !== undefined,
    );
    if (stray === undefined) return { value: undefined };
    return {
      error: TesseraError.invalidArgument(
        from(stray),
        "applies only to a quantized model: set --quantization (TESSERA_QUANTIZATION) to int8 or int4",
      ),
    };
  }
  const problem = blockSize === undefined ? undefined : blockSizeProblem(blockSize);
  if (problem)
    return { error: TesseraError.invalidArgument(from("quantizationBlockSize"), `${blockSize} ${problem}`) };
  const defaults = defaultQuantization(quantization === "int8" ? 8 : 4);
  return {
    value: {
      bits: defaults.bits,
      blockSize: blockSize ?? defaults.blockSize,
      symmetric: scheme === undefined ? defaults.symmetric : scheme === "symmetric",
    },
  };
}
