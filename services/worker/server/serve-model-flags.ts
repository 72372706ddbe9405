// The model's architecture and dtype for `tessera serve`, as `--architecture` / `--dtype` or, where a
// flag is not given, the environment the operator sets on a worker pod (TESSERA_ARCHITECTURE,
// TESSERA_DTYPE, present only when the InferenceModel says other than auto) give them (serve-flags.ts),
// checked against the architectures and dtypes the worker serves. Errors name where the bad value came
// from (the flag or the variable).
import "../arch/builtin.ts";
import { type Result, TesseraError } from "../../kernel/errors.ts";
import {
  type ArchitectureDefinition,
  resolveArchitecture,
  supportedArchitectures,
} from "../arch/registry.ts";
import { type Checkpoint, describeCheckpoint, type ModelDtype } from "../model/checkpoint.ts";

export const SERVE_DTYPES = ["auto", "float32", "float16", "bfloat16"] as const;
export type ServeDtype = (typeof SERVE_DTYPES)[number];

export interface ModelInput {
  /** The registry's name of the architecture (e.g. LlamaForCausalLM); unset = what config.json says. */
  architecture?: string;
  dtype?: ServeDtype;
}

/**
 * Checks the architecture and dtype; `from` names where each came from. An architecture is a config.json
 * `model_type` (llama, mistral, qwen2, mixtral: the InferenceModel's values) or an `architectures` name
 * (LlamaForCausalLM); `auto` leaves it to config.json, as `auto` leaves the dtype to the checkpoint.
 */
export function modelInput(
  given: { architecture: string; dtype: string },
  from: (key: "architecture" | "dtype") => string,
): Result<ModelInput> {
  const input: ModelInput = {};
  const arch = given.architecture.trim();
  if (arch !== "auto") {
    const def = architectureNamed(arch);
    if (!def) {
      const kinds = supportedModelTypes().join(", ");
      const names = supportedArchitectures().join(", ");
      return {
        error: TesseraError.invalidArgument(
          from("architecture"),
          `unsupported architecture ${JSON.stringify(arch)}; supported: auto, ${kinds} (or ${names})`,
        ),
      };
    }
    input.architecture = def.name;
  }
  const dtype = given.dtype.trim();
  if (!isServeDtype(dtype))
    return {
      error: TesseraError.invalidArgument(
        from("dtype"),
        `unsupported dtype ${JSON.stringify(dtype)}; supported: ${SERVE_DTYPES.join(", ")}`,
      ),
    };
  if (dtype !== "auto") input.dtype = dtype;
  return { value: input };
}

/**
 * Why a checkpoint cannot be served in `dtype`, or undefined. The engine computes in float32 from
 * weights kept as the checkpoint stores them, or widened to float32 (`float32`: twice the memory of a
 * 16-bit checkpoint, the faster prepacked products); it does not narrow weights, nor turn one 16-bit
 * format into the other, so a dtype other than auto and float32 must be the checkpoint's own.
 */
export function dtypeProblem(dtype: ServeDtype | undefined, checkpoint: ModelDtype): string | undefined {
  if (dtype === undefined || dtype === "auto" || dtype === "float32" || dtype === checkpoint)
    return undefined;
  return (
    `dtype ${dtype} (--dtype / TESSERA_DTYPE): the checkpoint's weights are ${checkpoint} and converting ` +
    `them at load is not supported; use auto, float32 or ${checkpoint}`
  );
}

/** Whether serving `checkpoint` in `dtype` keeps its 16-bit weights as float32 in memory. */
export function widensWeights(dtype: ServeDtype | undefined, checkpoint: ModelDtype): boolean {
  return dtype === "float32" && checkpoint !== "float32";
}

/**
 * The checkpoint as `tessera serve` will run it (the architecture override applied); refuses a dtype it
 * cannot serve, naming the model. Shared by a single process and a shard of a group.
 */
export function servedCheckpoint(
  modelDir: string,
  input: { architecture?: string | undefined; dtype?: ServeDtype | undefined },
): Checkpoint {
  const checkpoint = describeCheckpoint(modelDir, input.architecture);
  const problem = dtypeProblem(input.dtype, checkpoint.dtype);
  if (problem) throw TesseraError.invalidArgument("model", problem);
  return checkpoint;
}

function architectureNamed(name: string): ArchitectureDefinition | undefined {
  return resolveArchitecture({ model_type: name }).value ?? resolveArchitecture({}, name).value;
}

function supportedModelTypes(): string[] {
  const types = supportedArchitectures().flatMap((n) => resolveArchitecture({}, n).value?.modelTypes ?? []);
  return [...new Set(types)].sort();
}

function isServeDtype(value: string): value is ServeDtype {
  return (SERVE_DTYPES as readonly string[]).includes(value);
}
