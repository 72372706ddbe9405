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

  readBlocks(blocks: RemoteBlockRef[], use: (index: number, data: Float32Array) => void): Promise<void> {
    return this.store.readBlocks(
      blocks.map((b) => b.hash),
      (i, block) => {
        const want = blocks[i]!.tokens;
        if (block.tokens.length !== want.length) return;
        for (let t = 0; t < want.length; t++) if (block.tokens[t] !== want[t]) return;
        use(i, block.data);
      },
    );
  }
}
