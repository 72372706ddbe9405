// The engine's remote KV tier backed by the Redis block store. A block the store returns is used only
// if its token ids are exactly the ones the engine asked for (the store verified the bytes and the
// hash; the tokens close the loop, since a hash alone could collide).
import type { RemoteBlockRef, RemoteKvTier } from "../engine/remote-kv.ts";
import type { RedisKvStore } from "./redis-kv-store.ts";

export class RedisKvTier implements RemoteKvTier {
  readonly store: RedisKvStore;

  constructor(store: RedisKvStore) {
    this.store = store;
  }

  putBlocks(blocks: (RemoteBlockRef & { data: Float32Array })[]): Promise<void> {
    return this.store.putBlocks(blocks);
  }

  async getBlocks(blocks: RemoteBlockRef[]): Promise<(Float32Array | undefined)[]> {
    const found = await this.store.getBlocks(blocks.map((b) => b.hash));
    return found.map((block, i) => {
      const want = blocks[i]!.tokens;
      if (!block || block.tokens.length !== want.length) return undefined;
      for (let t = 0; t < want.length; t++) if (block.tokens[t] !== want[t]) return undefined;
      return block.data;
    });
  }
}
