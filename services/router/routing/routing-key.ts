// The key a request is routed by. A session key, when the client sends one, keeps a conversation on
// one replica. Otherwise the key is the KV-block hash chain of the prompt's first `prefixBlocks` full
// blocks: the same hashes the workers' prefix caches use (services/inference/block-hash.ts, salted with
// `${modelId}@${revision}`), so prompts that share those blocks, e.g. a tenant's long system prompt,
// land on the replica that already holds them. A prompt shorter than one block is keyed by its tokens.
import { hash } from "node:crypto";
import { type BlockHash, prefixBlockHashes } from "../../inference/block-hash.ts";
import { positionOf, positionOfHex } from "./hash-ring.ts";

export interface RoutingKey {
  /** Ring position of the key. */
  position: number;
  /** What the key was made from. */
  source: "session" | "prefix" | "prompt";
  /** The hash chain of the prompt's leading full blocks (at most prefixBlocks of them). */
  blockHashes: BlockHash[];
}

export interface RoutingKeyInput {
  promptIds: readonly number[];
  blockSize: number;
  /** `${modelId}@${revision}`, as the engine salts its block hashes. */
  salt: string;
  /** How many leading blocks decide the key (prompts sharing them share a home). */
  prefixBlocks: number;
  sessionKey?: string | undefined;
}

export function routingKey(input: RoutingKeyInput): RoutingKey {
  const { promptIds, blockSize, salt, prefixBlocks } = input;
  const blockHashes = prefixBlockHashes(promptIds.slice(0, prefixBlocks * blockSize), blockSize, salt);
  if (input.sessionKey) {
    return { position: positionOf(`session\u0000${input.sessionKey}`), source: "session", blockHashes };
  }
  const last = blockHashes.at(-1);
  if (last !== undefined) return { position: positionOfHex(last), source: "prefix", blockHashes };
  const ids = Uint32Array.from(promptIds);
  const digest = hash(
    "sha256",
    Buffer.concat([Buffer.from(`${salt}\u0000`), Buffer.from(ids.buffer)]),
    "hex",
  );
  return { position: positionOfHex(digest), source: "prompt", blockHashes };
}
