// `tessera model create`: writes a deterministic random checkpoint in Hugging Face format. The model
// factory is development tooling (devtools/): only its list of presets loads with the CLI; the factory
// itself loads when the command runs.
import { Command, Option } from "commander";
import type { CreateCheckpointOptions } from "../../devtools/model-factory/create-checkpoint.ts";
import { ARCHS, CHECKPOINT_DTYPES, PRESETS, ROPE_SCALINGS } from "../../devtools/model-factory/presets.ts";
import { nonNegativeIntegerFlag } from "./flags.ts";

type CreateFlags = Pick<
  CreateCheckpointOptions,
  "arch" | "preset" | "seed" | "out" | "dtype" | "tokenizer" | "chatTemplate" | "ropeScaling"
>;

export function modelCommand(): Command {
  const model = new Command("model").description("Manage model checkpoints");
  model
    .command("create")
    .description("Create a randomly initialised checkpoint (for tests, demos and benchmarks)")
    .addOption(new Option("--arch <arch>", "model architecture").choices(ARCHS).makeOptionMandatory())
    .addOption(new Option("--preset <preset>", "model size").choices(PRESETS).makeOptionMandatory())
    .requiredOption("--seed <n>", "seed of the random weights (integer >= 0)", nonNegativeIntegerFlag)
    .requiredOption("--out <dir>", "folder to write the checkpoint into (created if missing)")
    .addOption(new Option("--dtype <dtype>", "weight dtype (default: float32)").choices(CHECKPOINT_DTYPES))
    .option(
      "--tokenizer <dir>",
      "carry the real tokenizer in this folder (tokenizer.json, tokenizer_config.json, chat template), " +
        "written as transformers saves it; the vocab size and bos/eos/pad ids follow it",
    )
    .option(
      "--chat-template <file>",
      "with --tokenizer: the chat template (Jinja) to carry as chat_template.jinja, instead of any in " +
        "the tokenizer folder (as for a chat model whose tokenizer files lack it)",
    )
    .addOption(
      new Option("--rope-scaling <type>", "rope scaling in config.json (default: none)").choices(
        ROPE_SCALINGS,
      ),
    )
    .action(async (flags: CreateFlags) => {
      const { createCheckpoint } = await import("../../devtools/model-factory/create-checkpoint.ts");
      const made = await createCheckpoint(flags);
      const params = `${(made.parameterCount / 1e6).toFixed(1)}M parameters`;
      const size = `${(made.bytes / 2 ** 20).toFixed(1)} MiB`;
      process.stdout.write(
        `created a ${made.preset} ${made.arch} checkpoint (${params}, ${made.dtype}, ${size}) in ${made.out}\n`,
      );
    });
  return model;
}
