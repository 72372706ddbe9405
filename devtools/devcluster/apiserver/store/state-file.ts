// Optional persistence: the store's snapshot is written to a JSON file shortly after changes
// (and on close), atomically (temp file + rename), and loaded at start-up.
import { readFile, rename, writeFile } from "node:fs/promises";
import type { Clock } from "../../../../services/kernel/clock.ts";
import { TesseraError } from "../../../../services/kernel/errors.ts";
import type { ObjectStore, StoreSnapshot } from "./object-store.ts";

export async function loadStateFile(file: string): Promise<StoreSnapshot | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw TesseraError.from(err);
  }
  const parsed = JSON.parse(text) as Partial<StoreSnapshot>;
  if (typeof parsed.revision !== "number" || !Array.isArray(parsed.objects)) {
    throw TesseraError.invalidArgument("stateFile", `${file} is not a dev cluster state file`);
  }
  return parsed as StoreSnapshot;
}

/** Keeps `file` in step with the store until stopped; `flush()` writes now. */
export class StateFileWriter {
  readonly #file: string;
  readonly #store: ObjectStore;
  readonly #clock: Clock;
  readonly #delayMs: number;
  #cancelTimer: (() => void) | undefined;
  #unsubscribe: (() => void) | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(file: string, store: ObjectStore, clock: Clock, delayMs = 200) {
    this.#file = file;
    this.#store = store;
    this.#clock = clock;
    this.#delayMs = delayMs;
  }

  start(): void {
    this.#unsubscribe = this.#store.watch(this.#store.revision, () => this.#schedule());
  }

  #schedule(): void {
    if (this.#cancelTimer) return;
    this.#cancelTimer = this.#clock.setTimer(this.#delayMs, () => {
      this.#cancelTimer = undefined;
      void this.flush();
    });
  }

  flush(): Promise<void> {
    const snapshot = JSON.stringify(this.#store.snapshot());
    const temp = `${this.#file}.tmp`;
    this.#writing = this.#writing.then(async () => {
      await writeFile(temp, snapshot, { mode: 0o600 });
      await rename(temp, this.#file);
    });
    return this.#writing;
  }

  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    await this.flush();
  }
}
