// `tessera serve --quantization int8|int4` with its block size and scheme (serve-flags.ts), or the
// variables the operator sets instead (TESSERA_QUANTIZATION, from the InferenceModel's
// spec.model.quantization), made the engine's QuantOptions (model/quantize-blocks.ts). A block size
// or scheme without a quantization to apply it to is refused rather than ignored; errors name the flag
// or variable the bad value came from.
import { type Result, TesseraError } from "../../kernel/errors.ts";
import { blockSizeProblem, type QuantOptions } from "../model/quantize-blocks.ts";

/** The block size when none is given: the common choice of int4 formats (GPTQ and AWQ use 32-128). */
export const DEFAULT_QUANTIZATION_BLOCK_SIZE = 32;

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
  return {
    value: {
      bits: quantization === "int8" ? 8 : 4,
      blockSize: blockSize ?? DEFAULT_QUANTIZATION_BLOCK_SIZE,
      symmetric: scheme !== "asymmetric",
    },
  };
}
