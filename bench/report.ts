// Benchmark results: every raw figure plus one check per target of the issue, with `pass` computed
// from the measured value. Written to bench/results/<suite>.json and summarised in bench/RESULTS.md.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface Check {
  name: string;
  value: number;
  /** The target as text, e.g. ">= 0.9" or "<= 0.3". */
  target: string;
  pass: boolean;
}

/** A check of `value` against `>= bound` or `<= bound`. */
export function check(name: string, value: number, op: ">=" | "<=", bound: number): Check {
  return { name, value, target: `${op} ${bound}`, pass: op === ">=" ? value >= bound : value <= bound };
}

export interface SuiteResult {
  suite: string;
  /** What was measured and how, in a sentence or two. */
  description: string;
  figures: Record<string, unknown>;
  checks: Check[];
}

const ROOT = path.resolve(import.meta.dirname);

export function writeResult(result: SuiteResult): void {
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
  const full = { ...result, machine, date: new Date().toISOString() };
  fs.mkdirSync(path.join(ROOT, "results"), { recursive: true });
  fs.writeFileSync(path.join(ROOT, "results", `${result.suite}.json`), `${JSON.stringify(full, null, 2)}\n`);
  updateSummary(result, machine);
  for (const c of result.checks)
    console.log(`${c.pass ? "PASS" : "FAIL"}  ${c.name}: ${round(c.value)} (target ${c.target})`);
}

function updateSummary(result: SuiteResult, machine: { cpus: number; cpuModel: string; node: string }): void {
  const file = path.join(ROOT, "RESULTS.md");
  const text = fs.existsSync(file)
    ? fs.readFileSync(file, "utf8")
    : "# Benchmark results\n\nWritten by `npm run bench -- <suite>`; raw figures are in `bench/results/<suite>.json`.\n";
  const begin = `<!-- suite:${result.suite} -->`;
  const end = `<!-- /suite:${result.suite} -->`;
  const rows = result.checks.map(
    (c) => `| ${c.name} | ${round(c.value)} | ${c.target} | ${c.pass ? "pass" : "**fail**"} |`,
  );
  const section = [
    begin,
    `## ${result.suite}`,
    "",
    `${result.description} (${new Date().toISOString().slice(0, 10)}, ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node})`,
    "",
    "| check | value | target | result |",
    "|---|---|---|---|",
    ...rows,
    end,
  ].join("\n");
  const start = text.indexOf(begin);
  const next =
    start >= 0
      ? text.slice(0, start) + section + text.slice(text.indexOf(end) + end.length)
      : `${text.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(file, next);
}

export function round(x: number): number {
  return Math.abs(x) >= 100 ? Math.round(x * 10) / 10 : Math.round(x * 1000) / 1000;
}
