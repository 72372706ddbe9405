#!/usr/bin/env node
// Launcher of the `tessera` CLI. The CLI is TypeScript run by Node's type stripping, so Node >= 24.
const major = Number(process.versions.node.split(".")[0]);
if (major < 24) {
  process.stderr.write(
    `tessera needs Node.js 24 or newer (this is ${process.version}); ` +
      "run it with the repository's Node: npx tessera ..., npm run tessera -- ..., or node_modules/.bin/node\n",
  );
  process.exit(1);
}
import("../main.ts");
