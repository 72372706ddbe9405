// Parsers for flag values: each throws commander's InvalidArgumentError, which commander reports as
// a one-line error naming the flag ("option '--top-k <k>' argument 'x' is invalid. ...").
// The integer readers are the flag tables' own (services/kernel/flag-table.ts), so a flag reads alike
// whether a table or a hand-written command declares it.
import { InvalidArgumentError } from "commander";
import type { TesseraError } from "../kernel/errors.ts";
import { integer, nonNegativeInteger, positiveInteger, type Reader } from "../kernel/flag-table.ts";

/** A reader as a commander parser: the reason it gives becomes commander's error naming the flag. */
export function commanderParser<T>(read: Reader<T>): (text: string) => T {
  return (text) => {
    const reading = read(text);
    if (reading.error !== undefined) throw new InvalidArgumentError(reading.error);
    return reading.value;
  };
}

export const integerFlag = commanderParser(integer);
export const nonNegativeIntegerFlag = commanderParser(nonNegativeInteger);
export const positiveIntegerFlag = commanderParser(positiveInteger);

export function numberFlag(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError("must be a number");
  return n;
}

export function seedFlag(value: string): bigint {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a non-negative integer");
  const seed = BigInt(value);
  if (seed >= 2n ** 64n) throw new InvalidArgumentError("must be below 2^64");
  return seed;
}

/** `1,2,3` (spaces allowed) -> [1, 2, 3]. */
export function idListFlag(value: string): number[] {
  const parts = value.split(",").map((p) => p.trim());
  if (parts.some((p) => !/^\d+$/.test(p))) {
    throw new InvalidArgumentError("must be comma-separated non-negative integers, e.g. 1,2,3");
  }
  return parts.map(Number);
}

/**
 * Rewrites an INVALID_ARGUMENT error about a request field into one about the flag that set it:
 * "max_tokens: must be > 0" -> "--max-tokens: must be > 0".
 */
export function asFlagError(error: TesseraError, flags: Record<string, string>): string {
  return error.message.replace(/^([a-z_][a-z_.]*)/i, (field) => flags[field] ?? field);
}
