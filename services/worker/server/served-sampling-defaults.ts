// Which sampling defaults a worker serves, as `tessera serve --generation-config` says (auto: the
// checkpoint's generation_config.json; none: no model defaults), logged once at start-up so an operator
// sees what an unset temperature, top_p, top_k, min_p or repetition_penalty will mean.
import { type SamplingDefaults, samplingDefaultsByApiName } from "../../inference/sampling-params.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Checkpoint } from "../model/checkpoint.ts";

export type GenerationConfigMode = "auto" | "none";

export function servedSamplingDefaults(
  checkpoint: Pick<Checkpoint, "generation">,
  mode: GenerationConfigMode,
  log: Logger,
): SamplingDefaults {
  const { sampling, notApplied } = checkpoint.generation;
  const served = mode === "auto" ? sampling : {};
  const fields = {
    generationConfig: mode,
    samplingDefaults: samplingDefaultsByApiName(served),
    ...(mode === "auto" && notApplied.length > 0 && { notApplied }),
    ...(mode === "none" && { ignored: samplingDefaultsByApiName(sampling) }),
  };
  const applied = Object.keys(fields.samplingDefaults).length > 0;
  log.info(
    fields,
    applied
      ? "sampling defaults from generation_config.json apply to requests that leave them unset"
      : "no model sampling defaults: unset fields keep the neutral defaults",
  );
  return served;
}
