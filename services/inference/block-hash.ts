// Identity of KV-cache blocks. A full block of `blockSize` tokens is named by the hash chain of its
// tokens: hash(parent block's hash, this block's tokens, salt). The salt names the model revision, so
// blocks of different weights never match. The router computes the same chain from the prompt to route
// a request to the replica that already caches its prefix, so engine and router share this module.
// A hash is only a hint: whoever finds a block by hash confirms it against the stored tokens.
import { hash } from "node:crypto";

export type BlockHash = string;

/** The hash of one full block given its parent's hash (undefined for the first block). */
export function blockHash(parent: BlockHash | undefined, tokens: ArrayLike<number>, salt: string): BlockHash {
  const ids = Uint32Array.from(tokens as ArrayLike<number>);
  const payload = Buffer.concat([
    Buffer.from(`${salt}\u0000${parent ?? ""}\u0000`),
    Buffer.from(ids.buffer, ids.byteOffset, ids.byteLength),
  ]);
  // sha256 from node:crypto (native, ~1 µs per block) truncated to 128 bits: collisions are negligible,
  // and a hit is confirmed against the stored tokens anyway.
  return hash("sha256", payload, "hex").slice(0, 32);
}

/** The hash chain of every full block of `tokens` (a trailing partial block has no hash). */
export function prefixBlockHashes(tokens: ArrayLike<number>, blockSize: number, salt: string): BlockHash[] {
  const hashes: BlockHash[] = [];
  let parent: BlockHash | undefined;
  for (let start = 0; start + blockSize <= tokens.length; start += blockSize) {
    parent = blockHash(
      parent,
      Array.prototype.slice.call(tokens, start, start + blockSize) as number[],
      salt,
    );
    hashes.push(parent);
  }
  return hashes;
}
