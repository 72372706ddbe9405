// The `tessera` command line: model create, generate, serve, router, batch, operator. runCli returns the exit
// code: 0 done, 1 failed (e.g. a missing model folder, a port in use), 2 bad flags. A failure is one
// line on stderr naming the command: `tessera router: cannot listen on 127.1.0.3:8080 (httpPort): ...`.
import { Command, CommanderError } from "commander";
import { TesseraError } from "../kernel/errors.ts";
import { batchCommand } from "./batch-command.ts";
import { devCommand } from "./dev-command.ts";
import { generateCommand } from "./generate-command.ts";
import { modelCommand } from "./model-command.ts";
import { operatorCommand } from "./operator-command.ts";
import { routerCommand } from "./router-command.ts";
import { serveCommand } from "./serve-command.ts";
import { withTracing } from "./tracing-options.ts";

export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

export function createProgram(): Command {
  const program = new Command("tessera")
    .description("Tessera: distributed LLM inference in TypeScript")
    .addCommand(modelCommand())
    .addCommand(generateCommand())
    .addCommand(withTracing(serveCommand(), "tessera-worker"))
    .addCommand(withTracing(routerCommand(), "tessera-router"))
    .addCommand(batchCommand())
    .addCommand(operatorCommand())
    .addCommand(devCommand());
  throwInsteadOfExit(program);
  return program;
}

/** Commands added with addCommand do not inherit exitOverride, so it is set on every one. */
function throwInsteadOfExit(command: Command): void {
  command.exitOverride().showSuggestionAfterError();
  command.commands.forEach(throwInsteadOfExit);
}

export async function runCli(argv: string[], program = createProgram()): Promise<number> {
  let running = program.name();
  program.hook("preAction", (_self, action) => {
    running = commandPath(action);
  });
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return exitCodeOf(err);
    process.stderr.write(`${running}: ${oneLine(TesseraError.from(err).message)}\n`);
    return EXIT_FAILED;
  }
}

/** `tessera model create`: the command's name after its parents'. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** A message on one line, so a log collector keeps it whole. */
function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, " ");
}

/** Help asked for exits 0; every other commander error is a usage error. */
function exitCodeOf(err: CommanderError): number {
  return err.exitCode === 0 ? 0 : EXIT_USAGE;
}
