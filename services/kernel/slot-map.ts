// A Map by string key whose values sit in array slots (slot-table.ts), for what a server keeps per
// request under a key: the index Map holds only the key and a slot number, so once V8 has aged its
// hash table into the old generation, what that table still points at after a delete is a string
// and a small integer, not the request (issue 22: a long-lived Map keeps its deleted values alive
// until the next full collection).
import { type Slot, SlotTable } from "./slot-table.ts";

export class SlotMap<V> {
  readonly #index = new Map<string, Slot>();
  readonly #slots = new SlotTable<V>();

  get size(): number {
    return this.#slots.size;
  }

  has(key: string): boolean {
    return this.#index.has(key);
  }

  get(key: string): V | undefined {
    const slot = this.#index.get(key);
    return slot === undefined ? undefined : this.#slots.get(slot);
  }

  set(key: string, value: V): void {
    const slot = this.#index.get(key);
    if (slot !== undefined) this.#slots.delete(slot);
    this.#index.set(key, this.#slots.add(value));
  }

  /** False if the key held nothing. */
  delete(key: string): boolean {
    const slot = this.#index.get(key);
    if (slot === undefined) return false;
    this.#index.delete(key);
    return this.#slots.delete(slot);
  }
}
