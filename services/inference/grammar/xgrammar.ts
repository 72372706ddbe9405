// xgrammar (https://github.com/mlc-ai/xgrammar, @mlc-ai/web-xgrammar: its C++ core compiled to
// WebAssembly), the grammar engine behind structured outputs, chosen over a matcher of our own by
// measurement (bench/suites/structured.ts, bench/results/structured.json, Llama 3 and Qwen 3
// vocabularies of 128k-151k ids): it prepares a vocabulary once in ~80 ms, compiles a JSON schema in
// ~20-35 ms (up to ~0.25 s on the loaded 2-core machine) and fills a token's mask in a median 0.003-0.02
// ms (0.4 ms at worst), against ~10 ms for a JSON matcher of our own that tries every vocabulary entry
// (structured-naive.ts), because its compiler decides most tokens per grammar position ahead of time.
// It is also correct on every document tried, except for numeric bounds (README, structured outputs).
//
// The package's bundle is a UMD script that reads `require` and `__filename`, but its package.json says
// "type": "module", so Node refuses to import it; it is evaluated here as the CommonJS module it is.
import { readFileSync } from "node:fs";
import nodeModule, { createRequire } from "node:module";
import vm from "node:vm";
import type * as XGrammar from "@mlc-ai/web-xgrammar";

export type XGrammarModule = typeof XGrammar;

/** What fillNextTokenBitmask uses of the binding that the package keeps to itself. */
interface Binding {
  vecIntToView(vector: unknown): Int32Array;
}

let loaded: XGrammarModule | undefined;
/** The last message the engine printed before it failed (its errors reach JS as a bare "Aborted()"). */
let lastError = "";

let started: Promise<XGrammarModule> | undefined;

/**
 * The xgrammar module, its WebAssembly binding started. Every caller goes through here first: the
 * package starts the binding on each call that finds it missing, so two first calls at once would start
 * it twice ("Cannot register public name 'JSONFormat' twice").
 */
export function xgrammarReady(): Promise<XGrammarModule> {
  started ??= (async () => {
    const xg = xgrammar();
    (await xg.Grammar.fromEBNF('root ::= "a"')).dispose();
    return xg;
  })();
  return started;
}

/** The xgrammar module as loaded: call xgrammarReady() once before using it. */
export function xgrammar(): XGrammarModule {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const file = require.resolve("@mlc-ai/web-xgrammar");
  const source = readFileSync(file, "utf8")
    .replace("binding = await Module();", "binding = await Module(__moduleArg);")
    // Its Emscripten loader imports `module` dynamically, which a compiled function cannot: handed in.
    .replace("await import('module')", "__nodeModule")
    // The binding itself, for the synchronous mask fill (fillNextTokenBitmask below).
    .replace("exports.default = index;", "exports.default = index; exports.__binding = () => binding;");
  const module = { exports: {} as XGrammarModule };
  const run = vm.compileFunction(
    source,
    ["exports", "module", "require", "__filename", "__dirname", "__moduleArg", "__nodeModule"],
    { filename: file },
  );
  // Messages go to lastError, not to stderr: a client's bad schema is its 400, not a log line.
  const moduleArg = {
    printErr: (text: string) => {
      if (/\[FATAL\]|error/i.test(text)) lastError = text;
    },
    print: () => {},
  };
  run(module.exports, module, require, file, file, moduleArg, nodeModule);
  loaded = module.exports;
  return loaded;
}

/**
 * Runs an xgrammar call, turning its failure into the message it printed ("EBNF parser error at line 1,
 * column 10: Rule \"bad\" is not defined"), without the C++ source location.
 */
export async function explained<T>(call: () => Promise<T>): Promise<{ value: T } | { error: string }> {
  await xgrammarReady();
  lastError = "";
  try {
    return { value: await call() };
  } catch (err) {
    const printed = lastError.replace(/^\[FATAL\]\s*\S+:\d+:\s*/, "").trim();
    return { error: printed || (err instanceof Error ? err.message : String(err)) };
  }
}

/**
 * Fills `out` with the matcher's mask for its next token, synchronously: the package's
 * getNextTokenBitmask is async only to await the binding's start, which any matcher already implies, and
 * a step's masks are filled while the model runs, with no await in between.
 */
export function fillNextTokenBitmask(
  matcher: XGrammar.GrammarMatcher,
  vocabSize: number,
  out: Int32Array,
): void {
  const binding = (xgrammar() as unknown as { __binding(): Binding }).__binding();
  const handle = (matcher as unknown as { handle: { GetNextTokenBitmask(n: number): { delete(): void } } })
    .handle;
  const vector = handle.GetNextTokenBitmask(vocabSize);
  try {
    out.set(binding.vecIntToView(vector));
  } finally {
    vector.delete();
  }
}
