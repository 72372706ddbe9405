// `tessera serve`: serves one checkpoint over gRPC until SIGTERM or SIGINT, then drains and exits 0.
// Its flags are the worker's (services/worker/server/serve-flags.ts); this command only mounts them.
import { Command } from "commander";
import { flagOfField } from "../kernel/flag-table.ts";
import { createLogger } from "../kernel/log.ts";
import { loadServe, loadServeConfig, SERVE_FLAGS } from "../worker/index.ts";
import { flagsGiven, mountFlags } from "./flag-options.ts";
import { asFlagError } from "./flags.ts";
import { execWithServeSettings } from "./serve-process.ts";

export function serveCommand(): Command {
  const command = new Command("serve")
    .summary("Serve a checkpoint over gRPC")
    .description(
      "Serve a checkpoint over gRPC (tessera.v1.Inference, grpc.health.v1, reflection). " +
        "SIGTERM drains: health turns NOT_SERVING, new calls get UNAVAILABLE, calls in flight finish " +
        "(cancelled after --drain-timeout-ms), then the process exits 0.",
    );
  return mountFlags(command, SERVE_FLAGS).action(async (_flags: unknown, self: Command) => {
    // Before anything is allocated: glibc and V8 read these settings at process start only.
    execWithServeSettings();
    const serveConfigFromFlags = await loadServeConfig();
    const config = serveConfigFromFlags(flagsGiven(self, SERVE_FLAGS), process.env);
    if (config.error)
      self.error(`error: ${asFlagError(config.error, flagOfField(SERVE_FLAGS))}`, { exitCode: 2 });
    const serve = await loadServe();
    await serve(config.value, createLogger("server"));
  });
}
