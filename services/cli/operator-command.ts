// `tessera operator`: runs the Kubernetes operator (InferenceModel and WorkerPool controllers)
// against the cluster of a kubeconfig, or in-cluster. SIGTERM or SIGINT stops it cleanly (exit 0).
import { Command, Option } from "commander";
import { Code, TesseraError } from "../kernel/errors.ts";
import { createLogger } from "../kernel/log.ts";
import { nonNegativeIntegerFlag, positiveIntegerFlag } from "./flags.ts";

interface OperatorFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  allNamespaces?: boolean;
  leaderElect: boolean;
  leaseNamespace?: string;
  metricsPort: number;
  healthPort: number;
  bindAddress?: string;
  workers: number;
  servedNameCheck: boolean;
  tlsDir?: string;
}

export function operatorCommand(): Command {
  return new Command("operator")
    .summary("Run the Kubernetes operator")
    .description(
      "Run the Tessera operator: it places the worker pods of InferenceModels (crds/ must be applied), " +
        "registers their shards in status and keeps them serving. It talks to the API server of --kubeconfig " +
        "($KUBECONFIG, the in-cluster service account, or ~/.kube/config).",
    )
    .option("--kubeconfig <file>", "kubeconfig file")
    .option("--context <name>", "kubeconfig context (default: its current context)")
    .option("--namespace <ns>", "namespace to watch (default: the context's namespace)")
    .option("--all-namespaces", "watch every namespace (needs the ClusterRole)")
    .option("--no-leader-elect", "do not take the coordination.k8s.io Lease before acting")
    .option("--lease-namespace <ns>", "namespace of the Lease (default: the context's namespace)")
    .option(
      "--metrics-port <port>",
      "Prometheus /metrics port (0 = a free one)",
      nonNegativeIntegerFlag,
      8080,
    )
    .option(
      "--health-port <port>",
      "/healthz and /readyz port (0 = a free one)",
      nonNegativeIntegerFlag,
      8081,
    )
    .option(
      "--bind-address <host>",
      "interface of the metrics and health ports (default: 0.0.0.0 in a pod, 127.0.0.1 elsewhere, so an operator on a dev cluster's host leaves the pods' addresses free)",
    )
    .option("--workers <n>", "reconciles at once per kind", positiveIntegerFlag, 4)
    .option(
      "--no-served-name-check",
      "call a model Ready without asking its workers which name they serve (ListModels over gRPC), for an operator that cannot reach the worker pods",
    )
    .addOption(
      new Option(
        "--tls-dir <dir>",
        "mutual TLS for the served-name check on workers that serve TLS: a mounted TLS Secret folder (tls.crt, tls.key, ca.crt), reloaded when it changes",
      ).env("TESSERA_TLS_DIR"),
    )
    .action(async (flags: OperatorFlags, command: Command) => {
      const { parseOperatorConfig, startOperatorProcess } = await import("../../operator/index.ts");
      const config = parseOperatorConfig(flags);
      if (config.error)
        command.error(`error: --${config.error.message.replace(/^[a-zA-Z]+/, kebab)}`, { exitCode: 2 });
      const running = await startOperatorProcess(config.value, process.env, createLogger("operator"));
      const stop = () => void running.stop();
      process.once("SIGTERM", stop);
      process.once("SIGINT", stop);
      // Only a lost Lease ends the operator with an error (logged): exit non-zero, so it restarts.
      if ((await running.done) !== 0)
        throw new TesseraError(Code.ABORTED, "lost the leader Lease; exiting to campaign again");
    });
}

function kebab(field: string): string {
  return field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
