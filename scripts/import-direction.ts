// Which way imports may go between the folders of the repository (docs/DESIGN.md, "Layout"). Shared
// libraries sit below the deployables, each importing only the libraries beneath it; a deployable
// (worker, router, operator) never imports another's internals; the CLI, which starts them, reaches
// each only through its public entry (index.ts); development tooling (devtools/) is imported only by
// tests and by the CLI's development commands. Test code (specs, testing/ and testdata/ folders, e2e,
// bench, scripts, charts) may import anything, but product code never imports test code.
// import-direction.spec.ts checks every relative import of the repository against these rules.
import { readFileSync } from "node:fs";
import path from "node:path";

export type Layer =
  | "proto"
  | "kernel"
  | "tokenizer"
  | "rpc"
  | "kube"
  | "api"
  | "inference"
  | "batch"
  | "worker"
  | "router"
  | "operator"
  | "cli"
  | "devtools"
  | "test";

/** Layers by path prefix, first match wins (paths relative to the repository root). */
const LAYER_PREFIXES: [string, Layer][] = [
  ["proto/gen/", "proto"],
  ["services/kernel/", "kernel"],
  ["services/tokenizer/", "tokenizer"],
  ["services/rpc/", "rpc"],
  ["services/kube/", "kube"],
  ["services/api/", "api"],
  ["services/inference/", "inference"],
  ["services/batch/", "batch"],
  ["services/worker/", "worker"],
  ["services/router/", "router"],
  ["operator/", "operator"],
  ["services/cli/", "cli"],
  ["devtools/", "devtools"],
  ["e2e/", "test"],
  ["bench/", "test"],
  ["scripts/", "test"],
  ["charts/", "test"],
];

/** What each product layer may import besides itself. */
export const MAY_IMPORT: Record<Exclude<Layer, "test">, readonly Layer[]> = {
  proto: [],
  kernel: [],
  tokenizer: ["kernel"],
  rpc: ["kernel", "proto"],
  kube: ["kernel"],
  api: ["kernel", "kube"],
  inference: ["kernel", "tokenizer", "proto"],
  batch: ["kernel"],
  worker: ["kernel", "rpc", "inference", "tokenizer", "proto"],
  router: ["kernel", "rpc", "inference", "tokenizer", "kube", "api", "proto", "batch"],
  operator: ["kernel", "rpc", "kube", "api", "proto"],
  cli: ["kernel", "rpc", "inference", "tokenizer", "proto", "batch"],
  devtools: ["kernel", "tokenizer", "rpc", "kube", "api", "inference", "proto"],
};

/** The one file through which the CLI reaches each deployable. */
export const PUBLIC_ENTRY: Partial<Record<Layer, string>> = {
  worker: "services/worker/index.ts",
  router: "services/router/index.ts",
  operator: "operator/index.ts",
};

/** The CLI's development commands (`tessera dev`, `tessera model create`), which load devtools/. */
export const DEV_COMMANDS: readonly string[] = [
  "services/cli/dev-command.ts",
  "services/cli/model-command.ts",
];

export function isTestCode(file: string): boolean {
  return file.endsWith(".spec.ts") || /(^|\/)(testing|testdata)\//.test(file) || layerOf(file) === "test";
}

export function layerOf(file: string): Layer | undefined {
  return LAYER_PREFIXES.find(([prefix]) => file.startsWith(prefix))?.[1];
}

/** Why `from` may not import `to` (both relative to the root), or undefined when it may. */
export function importViolation(from: string, to: string): string | undefined {
  if (isTestCode(from)) return undefined;
  if (isTestCode(to)) return "product code imports test code";
  const a = layerOf(from);
  const b = layerOf(to);
  if (a === undefined || a === "test") return undefined;
  if (b === undefined) return `imports ${to}, which belongs to no layer`;
  if (a === b || MAY_IMPORT[a].includes(b)) return undefined;
  if (a === "cli" && PUBLIC_ENTRY[b] === to) return undefined;
  if (a === "cli" && b === "devtools" && DEV_COMMANDS.includes(from)) return undefined;
  const entry = PUBLIC_ENTRY[b];
  const hint =
    b === "devtools"
      ? "development tooling is imported only by tests and the CLI's development commands"
      : entry
        ? `a deployable never imports another's internals${a === "cli" ? `; the CLI uses ${entry}` : ""}`
        : `${a} may import ${[a, ...MAY_IMPORT[a]].join(", ")}`;
  return `${a} may not import ${b} (${hint})`;
}

/** The relative module specifiers of a TypeScript source: static, re-exported and dynamic imports. */
export function relativeImports(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(
    /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm,
  )) {
    found.push(m[1] as string);
  }
  return found;
}

/** Every import of `files` (root-relative .ts paths) that breaks the rules, as readable lines. */
export function violations(root: string, files: readonly string[]): string[] {
  const out: string[] = [];
  for (const file of files) {
    for (const spec of relativeImports(readFileSync(path.join(root, file), "utf8"))) {
      const target = path.relative(root, path.resolve(root, path.dirname(file), spec));
      const why = importViolation(file, target);
      if (why) out.push(`${file} -> ${target}: ${why}`);
    }
  }
  return out;
}
