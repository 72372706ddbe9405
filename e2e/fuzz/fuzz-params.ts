// How many cases each fuzzing spec runs, from which seed. The seed is fixed by default so CI runs the
// same cases every time; TESSERA_FUZZ_SEED=<n> (or "random") explores others, TESSERA_FUZZ_RUNS=<x>
// multiplies the number of cases. fast-check names the seed and the shrunk counterexample when a
// property fails; the seed is printed here too, so a failure in a CI log can be replayed.
import fc from "fast-check";

const seedEnv = process.env["TESSERA_FUZZ_SEED"];
const seed =
  seedEnv === undefined || seedEnv === ""
    ? 20261127
    : seedEnv === "random"
      ? Math.floor(Math.random() * 2 ** 31)
      : Number(seedEnv);
const scale = Number(process.env["TESSERA_FUZZ_RUNS"] ?? 1) || 1;

/** fast-check parameters for a property of `numRuns` cases (scaled by TESSERA_FUZZ_RUNS). */
export function fuzzParams<T>(numRuns: number, examples: T[] = []): fc.Parameters<T> {
  return { seed, numRuns: Math.max(1, Math.round(numRuns * scale)), examples, endOnFailure: true };
}

/** fc.assert, with the seed in the error so a failing run can be replayed (TESSERA_FUZZ_SEED). */
export async function assertProperty<T>(
  property: fc.IAsyncPropertyWithHooks<T>,
  params: fc.Parameters<T>,
): Promise<void> {
  try {
    await fc.assert(property, params);
  } catch (err) {
    (err as Error).message = `TESSERA_FUZZ_SEED=${seed}\n${(err as Error).message}`;
    throw err;
  }
}
