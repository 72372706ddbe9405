// Builders for routing tests.
import { createLogger } from "../../kernel/log.ts";
import type { Candidate, LoadReport, PluginContext, RoutingRequest } from "../routing/plugin.ts";

export function candidate(name: string, fields: Partial<Omit<Candidate, "name">> = {}): Candidate {
  return { name, inFlight: 0, load: undefined, ttftMs: undefined, ...fields };
}

export function load(fields: Partial<LoadReport> = {}): LoadReport {
  return { running: 0, waiting: 0, kvBlocksUsed: 0, kvBlocksTotal: 100, ...fields };
}

export const request: RoutingRequest = {
  key: { position: 0, source: "prompt", blockHashes: [] },
  promptTokens: 8,
};

/** A repeatable uniform generator (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export function pluginContext(seed = 1): PluginContext {
  return { random: seededRandom(seed), log: createLogger("test", "silent") };
}
