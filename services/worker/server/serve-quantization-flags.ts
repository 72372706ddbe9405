// `tessera serve --quantization int8|int4` with its block size and scheme (serve-flags.ts), or the
// variables the operator sets instead (TESSERA_QUANTIZATION, from the InferenceModel's
// spec.model.quantization), made the engine's QuantOptions (model/quantize-blocks.ts). A block size
// or scheme without a quantization to apply it to is refused rather than ignored; errors name the flag
// or variable the bad value came from.
import { type Result, TesseraError } from "../../kernel/errors.ts";
import { positiveInteger, type Reader } from "../../kernel/flag-table.ts";
import {
  blockSizeProblem,
  PER_CHANNEL,
  type QuantBits,
  type QuantOptions,
} from "../model/quantize-blocks.ts";

/**
 * The block size when none is given, per bits, measured (`npm run bench -- quantization` and
 * `-- quality`, base preset and the trained reference model).
 * int8: one scale per output feature (`channel`), run by MatMulIntegerToFloat with int8 activations per row
 * (graph/graph-weights-channel.ts): on a CPU with AMX or VNNI its products take a quarter to a half of
 * MatMulNBits's blocks' time at 16 rows and more (a 128-token prefill of the base preset 100 -> 43 ms,
 * 2 threads, Intel Xeon with AMX), batch-1 decode no more, for the same perplexity within 0.1%.
 * int4: blocks of 128. Against blocks of 32, a 128-token prefill takes ~20% less CPU (~70 vs ~90 ms,
 * 1 thread), batch-1 decode ~10% less, for held-out perplexity x1.0046 of float32's (x1.0029 at 32).
 * Blocks of 256 were ~5-10% faster still at the same quality but divide fewer hidden sizes
 * (Qwen2-0.5B's 896): a tied embedding whose rows are not whole blocks cannot be read from the LM
 * head's codes and would be kept as floats beside them. 128 is also the group size of GPTQ and AWQ
 * checkpoints. int4 has no per-channel form: one scale per row loses too much at 4 bits.
 */
export const DEFAULT_QUANTIZATION_BLOCK_SIZE: Readonly<Record<QuantBits, QuantOptions["blockSize"]>> = {
  8: PER_CHANNEL,
  4: 128,
};

/** `--quantization-block-size`: `channel` or a positive integer (checked against the bits later). */
export const quantizationBlockSize: Reader<QuantOptions["blockSize"]> = (text) =>
  text.trim() === PER_CHANNEL ? { value: PER_CHANNEL } : positiveInteger(text);

/** `--quantization int8|int4` with neither a block size nor a scheme given. */
export function defaultQuantization(bits: QuantBits): QuantOptions {
  return { bits, blockSize: DEFAULT_QUANTIZATION_BLOCK_SIZE[bits], symmetric: true };
}

type Given = {
  quantization: "none" | "int8" | "int4";
  quantizationBlockSize: QuantOptions["blockSize"] | undefined;
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
  const defaults = defaultQuantization(quantization === "int8" ? 8 : 4);
  const problem = blockSize === undefined ? undefined : blockSizeProblem(blockSize, defaults.bits);
  if (problem)
    return { error: TesseraError.invalidArgument(from("quantizationBlockSize"), `${blockSize} ${problem}`) };
  return {
    value: {
      bits: defaults.bits,
      blockSize: blockSize ?? defaults.blockSize,
      symmetric: scheme === undefined ? defaults.symmetric : scheme === "symmetric",
    },
  };
}
