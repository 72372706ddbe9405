// The log of one container instance: stdout and stderr split into timestamped lines, kept in
// memory (bounded) for `kubectl logs` and appended to a file in CRI format
// ("<RFC 3339 time> <stream> F <line>") for people who tail it. Followers get new lines as
// they arrive, until the instance ends.
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import path from "node:path";
import type { Clock } from "../../../services/kernel/clock.ts";

export type LogStream = "stdout" | "stderr";

export interface LogLine {
  time: number;
  stream: LogStream;
  text: string;
}

export interface LogReadOptions {
  timestamps?: boolean;
  tailLines?: number;
  /** Only lines at or after this time (ms since the epoch). */
  sinceTime?: number;
  limitBytes?: number;
}

/** RFC 3339 with nanoseconds, as `kubectl logs --timestamps` prints. */
export function logTimestamp(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}000000Z`;
}

export function formatLines(lines: readonly LogLine[], timestamps: boolean): string {
  return lines.map((l) => (timestamps ? `${logTimestamp(l.time)} ${l.text}\n` : `${l.text}\n`)).join("");
}

export class ContainerLog {
  readonly #clock: Clock;
  readonly #maxLines: number;
  readonly #lines: LogLine[] = [];
  readonly #partial: Record<LogStream, string> = { stdout: "", stderr: "" };
  readonly #followers = new Set<() => void>();
  readonly #file: WriteStream | undefined;
  readonly #flushed: Promise<void>;
  #dropped = 0;
  #closed = false;

  constructor(options: { clock: Clock; maxLines: number; file?: string }) {
    this.#clock = options.clock;
    this.#maxLines = options.maxLines;
    if (options.file) {
      mkdirSync(path.dirname(options.file), { recursive: true });
      this.#file = createWriteStream(options.file, { flags: "a" });
      this.#file.on("error", () => {});
    }
    const file = this.#file;
    this.#flushed = file
      ? new Promise((resolve) => {
          file.once("close", () => resolve());
          file.once("error", () => resolve());
        })
      : Promise.resolve();
  }

  /** Resolves once the log file has everything written (after close). */
  flushed(): Promise<void> {
    return this.#flushed;
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(stream: LogStream, chunk: string | Uint8Array): void {
    if (this.#closed) return;
    const text =
      this.#partial[stream] + (typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    const parts = text.split("\n");
    this.#partial[stream] = parts.pop() ?? "";
    for (const part of parts) this.#push(stream, part);
  }

  /** Ends the instance: flushes partial lines and ends every follower. */
  close(): void {
    if (this.#closed) return;
    for (const stream of ["stdout", "stderr"] as const)
      if (this.#partial[stream] !== "") this.#push(stream, this.#partial[stream]);
    this.#closed = true;
    this.#file?.end();
    this.#wake();
  }

  lines(options: LogReadOptions = {}): LogLine[] {
    let lines = this.#lines;
    if (options.sinceTime !== undefined) {
      const since = options.sinceTime;
      lines = lines.filter((l) => l.time >= since);
    }
    if (options.tailLines !== undefined)
      lines = options.tailLines <= 0 ? [] : lines.slice(-options.tailLines);
    return [...lines];
  }

  read(options: LogReadOptions = {}): string {
    const text = formatLines(this.lines(options), options.timestamps ?? false);
    return options.limitBytes === undefined ? text : truncate(text, options.limitBytes);
  }

  /** The selected lines, then each new line, until the instance ends or the signal aborts. */
  async *follow(options: LogReadOptions, signal: AbortSignal): AsyncGenerator<string> {
    let budget = options.limitBytes ?? Number.POSITIVE_INFINITY;
    const emit = (text: string) => {
      const out = truncate(text, budget);
      budget -= Buffer.byteLength(out);
      return out;
    };
    const initial = this.lines(options);
    let next = this.#dropped + this.#lines.length;
    if (initial.length > 0) yield emit(formatLines(initial, options.timestamps ?? false));
    while (!signal.aborted && budget > 0) {
      const start = Math.max(0, next - this.#dropped);
      if (start < this.#lines.length) {
        const fresh = this.#lines.slice(start);
        next = this.#dropped + this.#lines.length;
        yield emit(formatLines(fresh, options.timestamps ?? false));
        continue;
      }
      if (this.#closed) return;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#followers.delete(wake);
          signal.removeEventListener("abort", wake);
          resolve();
        };
        this.#followers.add(wake);
        signal.addEventListener("abort", wake, { once: true });
      });
    }
  }

  #push(stream: LogStream, text: string): void {
    const line = { time: this.#clock.now(), stream, text };
    this.#lines.push(line);
    if (this.#lines.length > this.#maxLines) {
      this.#lines.shift();
      this.#dropped++;
    }
    this.#file?.write(`${logTimestamp(line.time)} ${stream} F ${text}\n`);
    this.#wake();
  }

  #wake(): void {
    for (const wake of [...this.#followers]) wake();
  }
}

function truncate(text: string, limitBytes: number): string {
  const bytes = Buffer.from(text);
  return bytes.length <= limitBytes ? text : bytes.subarray(0, Math.max(0, limitBytes)).toString("utf8");
}
