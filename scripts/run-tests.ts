// Runs every *.spec.ts under the project with mocha and ends with one line CI can read:
// "N passed, N failed". Usage: node scripts/run-tests.ts [path-substring-filter...]
import { globSync } from "node:fs";
import path from "node:path";
import Mocha from "mocha";

const root = path.resolve(import.meta.dirname, "..");
const filters = process.argv.slice(2);
const files = globSync("**/*.spec.ts", { cwd: root, exclude: (f) => f === "node_modules" || f === ".git" })
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort()
  .map((f) => path.join(root, f));

const mocha = new Mocha({ reporter: "spec", timeout: 120_000, slow: 5_000 });
for (const f of files) mocha.addFile(f);
await mocha.loadFilesAsync();
const runner = mocha.run();
runner.on("end", () => {
  const stats = runner.stats;
  const passed = stats?.passes ?? 0;
  const failed = stats?.failures ?? 0;
  const pending = stats?.pending ?? 0;
  if (pending > 0) console.log(`${pending} pending`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
  // Servers or worker threads a spec forgot to close must not hang CI.
  setTimeout(() => process.exit(), 2_000).unref();
});
