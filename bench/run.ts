// `npm run bench -- <suite> [args]`: runs bench/suites/<suite>.ts, which writes
// bench/results/<suite>.json and its section of bench/RESULTS.md (see report.ts).
import fs from "node:fs";
import path from "node:path";

const suite = process.argv[2];
const dir = path.join(import.meta.dirname, "suites");
const suites = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".spec.ts"))
  .map((f) => f.slice(0, -3));
if (!suite || !suites.includes(suite)) {
  console.error(`usage: npm run bench -- <suite>   (suites: ${suites.join(", ")})`);
  process.exit(2);
}
const mod = (await import(path.join(dir, `${suite}.ts`))) as { run(args: string[]): Promise<void> };
await mod.run(process.argv.slice(3));
