// The import direction of docs/DESIGN.md holds for every source file: a wrong-direction import fails
// the test run with the file, the import and the rule it breaks.
import assert from "node:assert/strict";
import { globSync } from "node:fs";
import path from "node:path";
import { importViolation, relativeImports, violations } from "./import-direction.ts";

const root = path.resolve(import.meta.dirname, "..");

describe("import direction", () => {
  it("holds for every TypeScript file of the repository", () => {
    const files = globSync("**/*.ts", {
      cwd: root,
      exclude: (f) => f === "node_modules" || f === ".git" || f === ".tessera",
    }).filter((f) => !f.endsWith(".d.ts"));
    assert.ok(files.length > 500, `found only ${files.length} files`);
    assert.deepEqual(violations(root, files), []);
  });

  it("refuses a deployable importing another's internals, naming the rule", () => {
    assert.match(
      importViolation("services/router/core/attempt.ts", "services/worker/engine/engine.ts") ?? "",
      /router may not import worker \(a deployable never imports another's internals\)/,
    );
    assert.match(
      importViolation("operator/router/router-config.ts", "services/router/routing/plugins/pickers.ts") ?? "",
      /operator may not import router/,
    );
  });

  it("keeps shared libraries below the deployables and beneath each other", () => {
    assert.ok(importViolation("services/kernel/log.ts", "services/rpc/grpc-client.ts"));
    assert.ok(importViolation("services/kube/informer.ts", "operator/operator.ts"));
    assert.ok(importViolation("services/tokenizer/tokenizer.ts", "services/worker/engine/engine.ts"));
    assert.equal(
      importViolation("services/router/core/attempt.ts", "services/rpc/grpc-client.ts"),
      undefined,
    );
    assert.equal(
      importViolation("services/worker/engine/engine.ts", "services/worker/kv/block-pool.ts"),
      undefined,
    );
  });

  it("lets the CLI reach a deployable only through its public entry", () => {
    assert.equal(importViolation("services/cli/serve-command.ts", "services/worker/index.ts"), undefined);
    assert.ok(importViolation("services/cli/serve-command.ts", "services/worker/server/serve.ts"));
  });

  it("lets only tests and the development commands import devtools, and no product code import tests", () => {
    assert.ok(importViolation("services/worker/engine/engine.ts", "devtools/model-factory/presets.ts"));
    assert.ok(importViolation("services/cli/serve-command.ts", "devtools/devcluster/dev/dev-control.ts"));
    assert.equal(
      importViolation("services/cli/dev-command.ts", "devtools/devcluster/dev/dev-control.ts"),
      undefined,
    );
    assert.equal(
      importViolation("services/worker/engine/engine.spec.ts", "devtools/model-factory/presets.ts"),
      undefined,
    );
    assert.equal(importViolation("e2e/router/x.spec.ts", "services/worker/engine/engine.ts"), undefined);
    assert.match(
      importViolation("services/router/core/router.ts", "services/router/testing/models.ts") ?? "",
      /product code imports test code/,
    );
    assert.ok(importViolation("devtools/devcluster/kubelet/kubelet.ts", "operator/operator.ts"));
  });

  it("reads static, re-exported, side-effect and dynamic imports", () => {
    const source = [
      'import { a } from "./a.ts";',
      "import type {",
      "  B,",
      '} from "../b.ts";',
      'export { c } from "./c.ts";',
      'import "./d.ts";',
      'const e = await import("../../e.ts");',
      'import { f } from "node:fs";',
    ].join("\n");
    assert.deepEqual(relativeImports(source), ["./a.ts", "../b.ts", "./c.ts", "./d.ts", "../../e.ts"]);
  });
});
