// Entry point of the `tessera` CLI (run by bin/tessera.js and `npm run tessera --`).
import { runCli } from "./program.ts";

const code = await runCli(process.argv);
// A command that failed exits now: whatever it had started before failing (a listener, a watch, a model
// thread) must not keep a half-started process alive. Success ends when the command's work is done.
if (code !== 0) process.exit(code);
