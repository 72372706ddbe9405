// Small helpers for reading tokenizer.json and tokenizer_config.json, whose shapes are only known at run time.
import { Code, TesseraError } from "../kernel/errors.ts";

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A malformed file: INVALID_ARGUMENT naming the field. */
export function invalid(field: string, message: string): { error: TesseraError } {
  return { error: TesseraError.invalidArgument(field, message) };
}

/** A well-formed file that asks for something this tokenizer does not implement: UNIMPLEMENTED. */
export function unsupported(field: string, message: string): { error: TesseraError } {
  return { error: new TesseraError(Code.UNIMPLEMENTED, `${field}: ${message}`) };
}

/** The `type` of a component object, e.g. "ByteLevel", or undefined. */
export function typeOf(value: JsonObject): string | undefined {
  return typeof value["type"] === "string" ? value["type"] : undefined;
}
