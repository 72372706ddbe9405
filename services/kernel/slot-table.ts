// Values held in array slots, for what a server keeps per request in flight (issue 22). A JavaScript
// Map or Set that lives long enough to reach V8's old generation keeps what passes through it alive
// past its delete until the next full collection (bench/suites/router/h2-retention.ts `aged-map`:
// 96% of what a scavenge copied was promoted, against 0% for array slots emptied on delete, `slots`).
// A slot emptied on delete lets go of its value at once; freed slots are reused.

/** A value's place in a SlotTable: what `add` returns and `get`/`delete` take. */
export type Slot = number;

export class SlotTable<V> {
  readonly #values: (V | undefined)[] = [];
  readonly #free: Slot[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(value: V): Slot {
    const slot = this.#free.pop() ?? this.#values.length;
    this.#values[slot] = value;
    this.#size++;
    return slot;
  }

  get(slot: Slot): V | undefined {
    return this.#values[slot];
  }

  /** Empties the slot; false if it held nothing. */
  delete(slot: Slot): boolean {
    if (this.#values[slot] === undefined) return false;
    this.#values[slot] = undefined;
    this.#free.push(slot);
    this.#size--;
    return true;
  }

  /** The first value held that passes `test`, walking the slots in order (nothing allocated). */
  find(test: (value: V) => boolean): V | undefined {
    const values = this.#values;
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value !== undefined && test(value)) return value;
    }
    return undefined;
  }

  /** The values held now, in slot order (a copy: deleting while walking it is safe). */
  values(): V[] {
    const out: V[] = [];
    for (const value of this.#values) if (value !== undefined) out.push(value);
    return out;
  }
}
