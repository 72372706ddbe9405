// Entry point of the `tessera` CLI (run by bin/tessera.js and `npm run tessera --`).
import { runCli } from "./program.ts";

process.exitCode = await runCli(process.argv);
