// Static discovery: endpoints listed in a YAML or JSON file, re-read every `pollMs` and handed over
// when its content changes (reading, not watching, sees editors' atomic renames and never misses a
// change made just after start):
//
//   endpoints:
//     - { name: worker-0, address: 10.0.0.5:50051 }
//     - address: 10.0.0.6:50051          # the name defaults to the address
//     - { address: 10.0.0.7:50051, role: prefill }   # disaggregated: prefill or decode (default both)
//
// A file that becomes invalid is reported and ignored: the last good list stays in force.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { type Clock, systemClock } from "../../kernel/clock.ts";
import { Code, type Result, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { ENDPOINT_ROLES } from "../endpoints/endpoint.ts";
import type { EndpointDiscovery, EndpointSpec } from "./discovery.ts";

const fileSchema = z.strictObject({
  endpoints: z.array(
    z.strictObject({
      name: z.string().min(1).optional(),
      address: z.string().regex(/^[^\s:]+:\d+$|^\[[0-9a-fA-F:.]+\]:\d+$/, "must be host:port"),
      role: z.enum(ENDPOINT_ROLES).optional(),
    }),
  ),
});

/** Parses the endpoints file's text; errors name the entry. */
export function parseEndpointsFile(text: string): Result<EndpointSpec[]> {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    return { error: new TesseraError(Code.INVALID_ARGUMENT, `endpoints file: ${(err as Error).message}`) };
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.map(String).join(".") || "endpoints";
    return { error: TesseraError.invalidArgument(`endpoints file: ${field}`, issue?.message ?? "invalid") };
  }
  const specs = parsed.data.endpoints.map((e) => ({
    name: e.name ?? e.address,
    address: e.address,
    ...(e.role && { role: e.role }),
  }));
  const names = new Set<string>();
  for (const spec of specs) {
    if (names.has(spec.name))
      return { error: TesseraError.invalidArgument("endpoints file", `duplicate name ${spec.name}`) };
    names.add(spec.name);
  }
  return { value: specs };
}

export class StaticFileDiscovery implements EndpointDiscovery {
  readonly #file: string;
  readonly #pollMs: number;
  readonly #log: Logger;
  readonly #clock: Clock;
  #cancelTimer: (() => void) | undefined;
  #stopped = false;
  #last = "";
  /** The file's text when last parsed: an unchanged file is not parsed again. */
  #lastText: string | undefined;

  constructor(file: string, options: { pollMs: number; log: Logger; clock?: Clock }) {
    this.#file = file;
    this.#pollMs = options.pollMs;
    this.#log = options.log;
    this.#clock = options.clock ?? systemClock;
  }

  async start(onChange: (endpoints: EndpointSpec[]) => void): Promise<void> {
    const first = this.#read()!;
    if (first.error) throw first.error;
    this.#publish(first.value, onChange);
    if (this.#pollMs > 0) this.#poll(onChange);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#cancelTimer?.();
  }

  #poll(onChange: (endpoints: EndpointSpec[]) => void): void {
    this.#cancelTimer = this.#clock.setTimer(this.#pollMs, () => {
      if (this.#stopped) return;
      // Undefined when unchanged: parsing it at every poll (YAML and schema, ~0.5 ms) blocked the
      // router's event loop and made garbage ten times a second (issue 22).
      const next = this.#read();
      if (next?.error)
        this.#log.error({ file: this.#file, err: next.error.message }, "endpoints file ignored");
      else if (next) this.#publish(next.value, onChange);
      this.#poll(onChange);
    });
  }

  /** The file's endpoints, or undefined when its text is the same as when last read. */
  #read(): Result<EndpointSpec[]> | undefined {
    let text: string;
    try {
      text = readFileSync(this.#file, "utf8");
    } catch (err) {
      return {
        error: new TesseraError(
          Code.NOT_FOUND,
          `cannot read endpoints file ${this.#file}: ${(err as Error).message}`,
        ),
      };
    }
    if (text === this.#lastText) return undefined;
    this.#lastText = text;
    return parseEndpointsFile(text);
  }

  #publish(specs: EndpointSpec[], onChange: (endpoints: EndpointSpec[]) => void): void {
    const key = JSON.stringify(specs);
    if (key === this.#last) return;
    this.#last = key;
    this.#log.info({ endpoints: specs.length, file: this.#file }, "endpoints file read");
    onChange(specs);
  }
}
