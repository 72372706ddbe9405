// `tessera serve --quantization int8|int4` with its block size and scheme (serve-flags.ts), or the
// variables the operator sets instead (TESSERA_QUANTIZATION, from the InferenceModel's
// spec.model.quantization), made the engine's QuantOptions (model/quantize-blocks.ts). A block size
// or scheme without a quantization to apply it to is refused rather than ignored; errors name the flag
// or variable the bad value came from.
import { type Result, TesseraError } from "../../kernel/errors.ts";
import { blockSizeProblem, type QuantBits, type QuantOptions } from "../model/quantize-blocks.ts";

/** The block size when none is given, per bits. */
export const DEFAULT_QUANTIZATION_BLOCK_SIZE: Readonly<Record<QuantBits, number>> = { 8: 32, 4: 32 };

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
