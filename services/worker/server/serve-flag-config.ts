// The serve config from `tessera serve`'s flags and environment (serve-flags.ts): each value at its
// field, the architecture and dtype checked (serve-model-flags.ts), the quantization made
// (serve-quantization-flags.ts), then two rules of the sections. The
// remote KV tier is there only with a Redis address, TLS only with a folder. A shard is there only for a group of more than one
// worker (1 stage, tensor size 1 is the whole model in this process); its layers come from --layers, else
// from TESSERA_LAYER_START and TESSERA_LAYER_END when both are set. Errors name the flag or variable a
// bad value came from, or the config field (services/cli/serve-command.ts names its flag).
import { type Result, TesseraError } from "../../kernel/errors.ts";
import { configOf, type Env, readFlags } from "../../kernel/flag-table.ts";
import { parseSpeculativeConfig, type SpeculativeConfig } from "../speculative/speculative-config.ts";
import { parseServeConfig, type ServeConfig } from "./serve-config.ts";
import { SERVE_FLAGS, type ServeFlags } from "./serve-flags.ts";
import { modelInput } from "./serve-model-flags.ts";
import { quantizationInput } from "./serve-quantization-flags.ts";

/** The validated serve config; `given` holds only the flags on the command line. */
export function serveConfigFromFlags(given: Partial<ServeFlags>, env: Env): Result<ServeConfig> {
  const read = readFlags(SERVE_FLAGS, given, env);
  if (read.error) return read;
  const { values, from } = read.value;
  const model = modelInput(values, from);
  if (model.error) return model;
  const quantization = quantizationInput(values, from);
  if (quantization.error) return quantization;
  let speculative: SpeculativeConfig | undefined;
  try {
    speculative = values.speculativeConfig ? parseSpeculativeConfig(values.speculativeConfig) : undefined;
  } catch (err) {
    return { error: TesseraError.invalidArgument(from("speculativeConfig"), TesseraError.from(err).message) };
  }
  const { kv, shard, tls, ...rest } = configOf(SERVE_FLAGS, values);
  const { layerStart: start, layerEnd: end } = values;
  const isGroup = values.pipelineStages !== 1 || values.tensorSize !== 1;
  return parseServeConfig({
    ...rest,
    ...model.value,
    ...(quantization.value && { quantization: quantization.value }),
    ...(speculative && { speculative }),
    ...(values.kvRedis && { kv }),
    ...((values.tlsDir || values.tlsServerName) && { tls }),
    ...(isGroup && {
      shard: {
        peers: [],
        ...(start !== undefined && end !== undefined && { layers: { start, end } }),
        ...(shard as object),
      },
    }),
  });
}
