// A hash map from a pair of token ids to a number, on typed arrays: BPE asks it "what is the rank of
// merging these two symbols?" for every adjacent pair, so it must be faster than a Map with built keys.

const EMPTY = -1;

export class PairTable {
  readonly #left: Int32Array;
  readonly #right: Int32Array;
  readonly #value: Int32Array;
  readonly #mask: number;
  #size = 0;

  /** Room for `capacity` pairs; the table does not grow. */
  constructor(capacity: number) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.#left = new Int32Array(slots).fill(EMPTY);
    this.#right = new Int32Array(slots);
    this.#value = new Int32Array(slots);
    this.#mask = slots - 1;
  }

  get size(): number {
    return this.#size;
  }

  /** Sets the value of the pair (ids >= 0), replacing an earlier one. */
  set(left: number, right: number, value: number): void {
    let i = slot(left, right, this.#mask);
    while (this.#left[i] !== EMPTY) {
      if (this.#left[i] === left && this.#right[i] === right) {
        this.#value[i] = value;
        return;
      }
      i = (i + 1) & this.#mask;
    }
    if (this.#size * 2 >= this.#mask + 1) throw new RangeError("PairTable is full");
    this.#left[i] = left;
    this.#right[i] = right;
    this.#value[i] = value;
    this.#size++;
  }

  /** The value of the pair, or -1. */
  get(left: number, right: number): number {
    let i = slot(left, right, this.#mask);
    for (;;) {
      const l = this.#left[i]!;
      if (l === EMPTY) return -1;
      if (l === left && this.#right[i] === right) return this.#value[i]!;
      i = (i + 1) & this.#mask;
    }
  }
}

function slot(left: number, right: number, mask: number): number {
  let h = Math.imul(left, 0x9e3779b1) ^ right;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  return (h ^ (h >>> 13)) & mask;
}
