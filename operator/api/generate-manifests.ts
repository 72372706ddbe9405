// `npm run crds`: writes crds/*.yaml and operator/deploy/rbac*.yaml from their TypeScript sources.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { generatedManifests, ROOT } from "./generated-manifests.ts";

for (const [file, content] of generatedManifests()) {
  mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
  writeFileSync(path.join(ROOT, file), content);
  console.log(`wrote ${file}`);
}
