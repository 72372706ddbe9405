// Tracing flags of the serving commands (`serve`, `router`): --otlp-endpoint turns tracing on (the
// standard OTEL_EXPORTER_OTLP_ENDPOINT is its default), --trace-sample-ratio keeps a fraction of new
// traces. Tracing starts before the command's action and is flushed and stopped after it.
import { type Command, Option } from "commander";
import type { Tracing } from "../kernel/telemetry/tracing.ts";
import { parseTracingConfig } from "../kernel/telemetry/tracing-config.ts";
import { numberFlag } from "./flags.ts";

interface TracingFlags {
  otlpEndpoint?: string;
  traceSampleRatio?: number;
}

export function withTracing(command: Command, serviceName: string): Command {
  let tracing: Tracing | undefined;
  return command
    .addOption(
      new Option(
        "--otlp-endpoint <url>",
        "send traces over OTLP/HTTP to this receiver (e.g. http://otel-collector:4318); off when unset",
      ).env("OTEL_EXPORTER_OTLP_ENDPOINT"),
    )
    .addOption(
      new Option("--trace-sample-ratio <ratio>", "fraction of new traces kept, 0..1 (default 1)")
        .env("OTEL_TRACES_SAMPLER_ARG")
        .argParser(numberFlag),
    )
    .hook("preAction", async (self) => {
      const { otlpEndpoint, traceSampleRatio } = self.opts<TracingFlags>();
      const config = parseTracingConfig({
        serviceName,
        ...(otlpEndpoint !== undefined && { otlpEndpoint }),
        ...(traceSampleRatio !== undefined && { sampleRatio: traceSampleRatio }),
      });
      if (config.error) {
        const flag = config.error.message.startsWith("sampleRatio")
          ? "--trace-sample-ratio"
          : "--otlp-endpoint";
        self.error(`error: ${flag}${config.error.message.replace(/^[a-zA-Z]+/, "")}`, { exitCode: 2 });
      }
      // Only a process that traces loads the SDK and the exporter (tracing-start.ts).
      if (config.value?.otlpEndpoint !== undefined)
        tracing = (await import("../kernel/telemetry/tracing-start.ts")).startTracing(config.value);
    })
    .hook("postAction", async () => {
      await tracing?.shutdown();
    });
}
