// The linter, the formatter and the type checker are part of the test run.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const bin = (name: string) => path.join(root, "node_modules", ".bin", name);

function run(cmd: string, args: string[]): { code: number | null; output: string } {
  const r = spawnSync(cmd, args, { cwd: root, encoding: "utf8", timeout: 300_000 });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

describe("code quality", () => {
  it("passes biome lint and format checks", () => {
    const r = run(bin("biome"), ["check", "--colors=off", "."]);
    assert.equal(r.code, 0, r.output);
  });

  it("type-checks under the strict tsconfig", () => {
    const r = run(bin("tsc"), ["-p", "tsconfig.json", "--noEmit"]);
    assert.equal(r.code, 0, r.output);
  });

  // The public contract (proto/) and the dev cluster's Kubernetes messages (devtools/devcluster/proto).
  for (const dir of ["proto", "devtools/devcluster/proto"]) {
    it(`has generated protobuf code in step with ${dir}/`, () => {
      const r = run(bin("buf"), ["lint", dir]);
      assert.equal(r.code, 0, r.output);
      const gen = run("bash", [
        "-c",
        `cd ${dir} && d=$(mktemp -d) && PATH="${path.dirname(bin("x"))}:$PATH" buf generate -o "$d" && diff -r "$d/gen" gen && rm -rf "$d"`,
      ]);
      assert.equal(gen.code, 0, `${dir}/gen is stale; run npm run proto\n${gen.output}`);
    });
  }
});
