// `tessera generate`: loads a checkpoint in this process and streams one completion to stdout.
import { Command, Option } from "commander";
import type { RawSamplingParams } from "../inference/sampling-params.ts";
import type { FinishReason, GenerateEvent, GenerateRequest } from "../inference/types.ts";
import type { Result } from "../kernel/errors.ts";
import { loadEngine } from "../worker/index.ts";
import { asFlagError, idListFlag, integerFlag, numberFlag, positiveIntegerFlag, seedFlag } from "./flags.ts";

interface GenerateFlags {
  model: string;
  prompt?: string;
  promptIds?: number[];
  maxTokens: number;
  temperature: number;
  topP: number;
  topK: number;
  minP: number;
  repetitionPenalty: number;
  presencePenalty: number;
  frequencyPenalty: number;
  seed?: bigint;
  stop?: string[];
  ignoreEos?: boolean;
  minTokens: number;
  threads?: number;
  json?: boolean;
}

/** The --json output: exactly one object. */
export interface GenerateJson {
  prompt_ids: number[];
  output_ids: number[];
  text: string;
  finish_reason: FinishReason;
}

/** Which flag sets each request field, to name the flag in errors. */
const FLAG_OF_FIELD: Record<string, string> = {
  prompt: "--prompt",
  text: "--prompt",
  token_ids: "--prompt-ids",
  max_tokens: "--max-tokens",
  temperature: "--temperature",
  top_p: "--top-p",
  top_k: "--top-k",
  min_p: "--min-p",
  repetition_penalty: "--repetition-penalty",
  presence_penalty: "--presence-penalty",
  frequency_penalty: "--frequency-penalty",
  seed: "--seed",
  stop: "--stop",
  min_tokens: "--min-tokens",
};

export function generateCommand(): Command {
  return new Command("generate")
    .description("Generate a completion in this process, streaming the text to stdout")
    .requiredOption("--model <dir>", "checkpoint folder")
    .addOption(
      new Option("--prompt <text>", "prompt text (tokenized with the model's special tokens)").conflicts(
        "promptIds",
      ),
    )
    .option("--prompt-ids <ids>", "prompt as comma-separated token ids, e.g. 1,2,3", idListFlag)
    .option("--max-tokens <n>", "tokens to generate (> 0)", positiveIntegerFlag, 16)
    .option("--temperature <t>", "sampling temperature; 0 = greedy", numberFlag, 0)
    .option("--top-p <p>", "nucleus sampling, 0 < p <= 1; 1 = off", numberFlag, 1)
    .option("--top-k <k>", "keep the k most likely tokens; 0 = off", integerFlag, 0)
    .option("--min-p <p>", "drop tokens below p × the top probability, 0 <= p <= 1; 0 = off", numberFlag, 0)
    .option(
      "--repetition-penalty <r>",
      "penalize tokens of the prompt and output, > 0; 1 = off",
      numberFlag,
      1,
    )
    .option(
      "--presence-penalty <p>",
      "subtract p from generated tokens' logits, -2..2; 0 = off",
      numberFlag,
      0,
    )
    .option(
      "--frequency-penalty <f>",
      "subtract f × count from generated tokens' logits, -2..2",
      numberFlag,
      0,
    )
    .option("--seed <s>", "random seed (same seed, same output)", seedFlag)
    .option("--stop <str...>", "stop before any of these strings (--stop a b, or --stop a --stop b)")
    .option("--ignore-eos", "keep generating past the model's eos tokens")
    .option(
      "--min-tokens <n>",
      "hold the eos tokens back until n tokens were generated, 0..max-tokens; 0 = off",
      integerFlag,
      0,
    )
    .option("--threads <n>", "engine threads (default: one per core)", positiveIntegerFlag)
    .option(
      "--json",
      "print one JSON object {prompt_ids, output_ids, text, finish_reason} instead of streaming",
    )
    .action(async (flags: GenerateFlags, command: Command) => {
      if (flags.prompt === undefined && flags.promptIds === undefined) {
        command.error("error: one of --prompt or --prompt-ids is required", { exitCode: 2 });
      }
      await generate(flags, command);
    });
}

async function generate(flags: GenerateFlags, command: Command): Promise<void> {
  const Engine = await loadEngine();
  const { parseSamplingParams } = await import("../inference/sampling-params.ts");
  const { checkPromptIds, promptIdsFromText } = await import("../inference/generate-request.ts");
  const engine = await Engine.load(
    flags.model,
    flags.threads === undefined ? {} : { threads: flags.threads },
  );
  try {
    const prompt =
      flags.promptIds === undefined
        ? promptIdsFromText(flags.prompt ?? "", engine)
        : checkPromptIds(flags.promptIds, engine.description);
    const sampling = parseSamplingParams(samplingFromFlags(flags), {
      vocabSize: engine.description.vocabSize,
    });
    const promptIds = orUsageError(prompt, command);
    const request: GenerateRequest = {
      requestId: "cli",
      promptIds,
      sampling: orUsageError(sampling, command),
    };
    const result = await stream(engine.generate(request, interruptSignal()), !flags.json);
    if (flags.json) process.stdout.write(`${JSON.stringify({ prompt_ids: promptIds, ...result })}\n`);
  } finally {
    await engine.close();
  }
}

function samplingFromFlags(flags: GenerateFlags): RawSamplingParams {
  return {
    maxTokens: flags.maxTokens,
    temperature: flags.temperature,
    topP: flags.topP,
    topK: flags.topK,
    minP: flags.minP,
    repetitionPenalty: flags.repetitionPenalty,
    presencePenalty: flags.presencePenalty,
    frequencyPenalty: flags.frequencyPenalty,
    seed: flags.seed,
    stop: flags.stop ?? [],
    ignoreEos: flags.ignoreEos ?? false,
    minTokens: flags.minTokens,
  };
}

function orUsageError<T>(result: Result<T>, command: Command): T {
  if (result.error) command.error(`error: ${asFlagError(result.error, FLAG_OF_FIELD)}`, { exitCode: 2 });
  return result.value;
}

async function stream(
  events: AsyncIterable<GenerateEvent>,
  print: boolean,
): Promise<Omit<GenerateJson, "prompt_ids">> {
  const output_ids: number[] = [];
  let text = "";
  let finish_reason: FinishReason = "cancelled";
  for await (const event of events) {
    text += event.textDelta;
    if (print) process.stdout.write(event.textDelta);
    if (event.type === "tokens") output_ids.push(...event.tokens.map((t) => t.tokenId));
    else finish_reason = event.reason;
  }
  if (print) process.stdout.write("\n");
  return { output_ids, text, finish_reason };
}

/** Aborts on the first Ctrl-C, so the completion ends as "cancelled" instead of the process dying. */
function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  process.once("SIGINT", () => controller.abort());
  return controller.signal;
}
