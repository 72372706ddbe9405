// Mounts a flag table (services/kernel/flag-table.ts) on a commander command: one option per
// entry that has a flag, read by the entry's reader (a bad value is commander's one-line error naming
// the flag), described in --help with its choices, default and variable. flagsGiven returns what the
// command line gave, for readFlags to complete from the environment and the defaults.
import { type Command, Option } from "commander";
import { type Flag, type FlagTable, type FlagValues, readerOf } from "../kernel/flag-table.ts";
import { commanderParser } from "./flags.ts";

export function mountFlags(command: Command, table: FlagTable): Command {
  for (const [key, flag] of Object.entries(table)) {
    if (flag.flag === undefined) continue;
    const option = new Option(flag.flag, helpOf(flag));
    if (option.attributeName() !== key)
      throw new Error(`the flag ${flag.flag} must be keyed ${option.attributeName()}, not ${key}`);
    if (flag.read !== undefined || flag.choices !== undefined)
      option.argParser(commanderParser(readerOf(flag)));
    if (flag.required === true) option.makeOptionMandatory();
    command.addOption(option);
  }
  return command;
}

/** The table's values given on the command line (the options' defaults left out). */
export function flagsGiven<Table extends FlagTable>(
  command: Command,
  table: Table,
): Partial<FlagValues<Table>> {
  const options = command.opts();
  const given = Object.keys(table).filter((key) => command.getOptionValueSource(key) === "cli");
  return Object.fromEntries(given.map((key) => [key, options[key]])) as Partial<FlagValues<Table>>;
}

/** The description, then the choices, default and variable as commander shows them: "(default: 0, env: X)". */
function helpOf(flag: Flag): string {
  const notes = [
    ...(flag.choices === undefined
      ? []
      : [`choices: ${flag.choices.map((c) => JSON.stringify(c)).join(", ")}`]),
    ...(flag.default === undefined ? [] : [`default: ${JSON.stringify(flag.default)}`]),
    ...(flag.env === undefined ? [] : [`env: ${flag.env}`]),
  ];
  return notes.length === 0 ? flag.description : `${flag.description} (${notes.join(", ")})`;
}
