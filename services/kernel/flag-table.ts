// A program's flags declared once, as a table. Each entry says how a flag is spelled and described, how
// its text is read, its default, the environment variable read when the flag is not given (the operator
// sets those on a worker pod) and the config field it sets; an entry without a flag is a variable only.
// The CLI mounts a table as commander options (services/cli/flag-options.ts), readFlags completes what
// the command line gave from the environment and the defaults, and configOf / flagOfField place the
// values in a raw config and name the flag behind a config field, so the options, the values' type, the
// reading and the errors all come from the one entry. Readers return { value } | { error } with the
// reason ("must be > 0"); whoever read the text names the flag or variable it came from.
import { Code, type Result, TesseraError } from "./errors.ts";

export type Env = Readonly<Record<string, string | undefined>>;

/** A text read as a value, or why it is not one. */
export type Reading<T> = { value: T; error?: undefined } | { value?: undefined; error: string };

export type Reader<T> = (text: string) => Reading<T>;

export interface Flag<T = unknown> {
  /** As commander spells it: "--port <port>"; "--no-x" is a switch, on unless given. Unset: a variable only. */
  readonly flag?: string;
  /** The flag's line in --help (its default and variable are added to it). */
  readonly description: string;
  /** Reads the text of the flag or of its variable; unset: the text as it is. */
  readonly read?: Reader<T>;
  /** The only texts allowed. */
  readonly choices?: readonly string[];
  /** The value when neither the flag nor its variable is set. */
  readonly default?: T;
  readonly required?: boolean;
  /** Read when the flag is not given; a blank one counts as unset. */
  readonly env?: string;
  /** Where the value goes in the program's raw config, a dotted path ("engine.blockSize"). */
  readonly field?: string;
}

export type FlagTable = Readonly<Record<string, Flag>>;

type Switch = { readonly flag: `--no-${string}` };
type ValueOf<F> = F extends { readonly read: Reader<infer T> }
  ? T
  : F extends { readonly choices: readonly (infer C)[] }
    ? C
    : F extends Switch
      ? boolean
      : string;
type AlwaysSet<F> = F extends { readonly default: unknown } | { readonly required: true } | Switch
  ? true
  : false;

/** The values a table reads to: a flag with a default, a required flag and a switch always have one. */
export type FlagValues<Table extends FlagTable> = {
  -readonly [K in keyof Table]: AlwaysSet<Table[K]> extends true
    ? ValueOf<Table[K]>
    : ValueOf<Table[K]> | undefined;
};

export interface FlagReading<Table extends FlagTable> {
  readonly values: FlagValues<Table>;
  /** Where a value came from, to name it in an error: its flag, or the variable read instead. */
  readonly from: (key: keyof Table & string) => string;
}

/**
 * Each value: the flag's as given on the command line (already read), else its variable's, else its
 * default. A variable that does not read is an error naming it and its flag.
 */
export function readFlags<Table extends FlagTable>(
  table: Table,
  given: Partial<FlagValues<Table>>,
  env: Env,
): Result<FlagReading<Table>> {
  const values: Record<string, unknown> = {};
  const fromEnv = new Set<string>();
  for (const [key, flag] of Object.entries(table)) {
    const givenValue = (given as Record<string, unknown>)[key];
    const text = flag.env === undefined ? undefined : env[flag.env];
    if (givenValue !== undefined) values[key] = givenValue;
    else if (text !== undefined && text.trim() !== "") {
      const read = readerOf(flag)(text);
      if (read.error !== undefined) return { error: unreadable(flag, text, read.error) };
      values[key] = read.value;
      fromEnv.add(key);
    } else values[key] = flag.default ?? (isSwitch(flag) ? true : undefined);
  }
  const from = (key: string) => {
    const flag = table[key]!;
    return (fromEnv.has(key) ? flag.env : undefined) ?? flagName(flag);
  };
  return { value: { values: values as FlagValues<Table>, from } };
}

/** The raw config the values make: each set value at its entry's field. */
export function configOf<Table extends FlagTable>(
  table: Table,
  values: FlagValues<Table>,
): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [key, flag] of Object.entries(table)) {
    const value = (values as Record<string, unknown>)[key];
    if (flag.field === undefined || value === undefined) continue;
    const path = flag.field.split(".");
    let section = config;
    for (const part of path.slice(0, -1)) {
      section[part] ??= {};
      section = section[part] as Record<string, unknown>;
    }
    section[path.at(-1)!] = value;
  }
  return config;
}

/** Config field -> the flag that sets it ("engine.blockSize" -> "--block-size"), to name flags in errors. */
export function flagOfField(table: FlagTable): Record<string, string> {
  const entries = Object.values(table).filter((f) => f.flag !== undefined && f.field !== undefined);
  return Object.fromEntries(entries.map((f) => [f.field, flagName(f)]));
}

/** "--port <port>" -> "--port"; a variable-only entry is named by its variable. */
export function flagName(flag: Flag): string {
  return flag.flag?.split(" ")[0] ?? flag.env ?? "(unnamed)";
}

export function isSwitch(flag: Flag): boolean {
  return flag.flag?.startsWith("--no-") === true;
}

/**
 * A variable that does not read, worded as commander words a bad value from a variable it reads itself
 * ("option '--kv-ttl-ms <ms>' value '0' from env 'TESSERA_KV_TTL_MS' is invalid. must be > 0"), so that
 * the CLI reports every bad value alike; a variable without a flag is named alone.
 */
function unreadable(flag: Flag, text: string, reason: string): TesseraError {
  if (flag.flag === undefined) return TesseraError.invalidArgument(flag.env ?? "", reason);
  const what = `option '${flag.flag}' value '${text}' from env '${flag.env}'`;
  return new TesseraError(Code.INVALID_ARGUMENT, `${what} is invalid. ${reason}`);
}

/** How an entry's text reads: one of its choices, then its reader's value. */
export function readerOf(flag: Flag): Reader<unknown> {
  const { choices, read } = flag;
  return (text) => {
    if (choices !== undefined && !choices.includes(text))
      return { error: `Allowed choices are ${choices.join(", ")}.` };
    return read === undefined ? { value: text } : read(text);
  };
}

export const integer: Reader<number> = (text) => {
  const n = Number(text);
  if (text.trim() === "" || !Number.isSafeInteger(n)) return { error: "must be an integer" };
  return { value: n };
};

export const nonNegativeInteger: Reader<number> = (text) => {
  const n = integer(text);
  return n.value !== undefined && n.value < 0 ? { error: "must be >= 0" } : n;
};

export const positiveInteger: Reader<number> = (text) => {
  const n = integer(text);
  return n.value !== undefined && n.value <= 0 ? { error: "must be > 0" } : n;
};

export const trimmed: Reader<string> = (text) => ({ value: text.trim() });
