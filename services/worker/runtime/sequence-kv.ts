// The K/V cache of one sequence, per layer, in the graph's token-major layout [T, kvH, D]: the first
// `length` tokens are a contiguous prefix of each buffer, passed to onnxruntime without a copy. Buffers
// grow by doubling up to the context size. (The paged, shared block pool replaces this in the engine
// scheduler; this is the simple cache of one request.)

export class SequenceKv {
  readonly tokenWidth: number;
  private readonly maxTokens: number;
  private keys: Float32Array[];
  private values: Float32Array[];
  private len = 0;

  constructor(layers: number, kvHeads: number, headDim: number, maxTokens: number, initialTokens = 64) {
    this.tokenWidth = kvHeads * headDim;
    this.maxTokens = maxTokens;
    const cap = Math.min(initialTokens, maxTokens) * this.tokenWidth;
    this.keys = Array.from({ length: layers }, () => new Float32Array(cap));
    this.values = Array.from({ length: layers }, () => new Float32Array(cap));
  }

  get length(): number {
    return this.len;
  }

  /** The cached keys / values of a layer: `length` tokens, no copy. */
  pastKeys(layer: number): Float32Array {
    return this.keys[layer]!.subarray(0, this.len * this.tokenWidth);
  }

  pastValues(layer: number): Float32Array {
    return this.values[layer]!.subarray(0, this.len * this.tokenWidth);
  }

  /** Appends `count` new tokens' K/V (one [count, kvH, D] array per layer). */
  append(count: number, newKeys: Float32Array[], newValues: Float32Array[]): void {
    const needed = (this.len + count) * this.tokenWidth;
    if (this.len + count > this.maxTokens)
      throw new RangeError(`KV cache full: ${this.len} + ${count} > ${this.maxTokens}`);
    if (needed > this.keys[0]!.length) this.grow(needed);
    const at = this.len * this.tokenWidth;
    for (let l = 0; l < this.keys.length; l++) {
      this.keys[l]!.set(newKeys[l]!.subarray(0, count * this.tokenWidth), at);
      this.values[l]!.set(newValues[l]!.subarray(0, count * this.tokenWidth), at);
    }
    this.len += count;
  }

  private grow(needed: number): void {
    let cap = this.keys[0]!.length || this.tokenWidth;
    while (cap < needed) cap *= 2;
    cap = Math.min(cap, this.maxTokens * this.tokenWidth);
    const widen = (old: Float32Array) => {
      const next = new Float32Array(cap);
      next.set(old.subarray(0, this.len * this.tokenWidth));
      return next;
    };
    this.keys = this.keys.map(widen);
    this.values = this.values.map(widen);
  }
}
