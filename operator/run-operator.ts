// The operator as a process: connect, serve /metrics and /healthz + /readyz, run until SIGTERM or
// SIGINT (then stop cleanly, releasing the Lease, exit code 0) or until leadership is lost (exit
// code 1, so the pod restarts and campaigns again).
import type { Server } from "node:http";
import { FIELD_MANAGER } from "../services/api/group.ts";
import { hostPort, listening } from "../services/kernel/listen-failure.ts";
import type { Logger } from "../services/kernel/log.ts";
import { listeningPort, Metrics } from "../services/kernel/telemetry/metrics.ts";
import { HttpsKubeClient } from "../services/kube/https-client.ts";
import { loadClusterConnection } from "../services/kube/kubeconfig.ts";
import { TlsFolder } from "../services/rpc/tls-folder.ts";
import { serveHealth } from "./controller/health-server.ts";
import { Operator } from "./operator.ts";
import { bindAddressOf, type OperatorConfig } from "./operator-config.ts";
import { GrpcWorkerModels } from "./reconcile/worker-models.ts";

export interface OperatorProcess {
  operator: Operator;
  metricsPort: number;
  healthPort: number;
  /** Resolves with the exit code once stopped. */
  done: Promise<number>;
  stop(): Promise<void>;
}

export async function startOperatorProcess(
  config: OperatorConfig,
  env: Record<string, string | undefined>,
  log: Logger,
): Promise<OperatorProcess> {
  const connection = loadClusterConnection({ kubeconfig: config.kubeconfig, context: config.context, env });
  const namespace = config.allNamespaces ? "" : (config.namespace ?? connection.namespace);
  const client = new HttpsKubeClient(connection, { fieldManager: FIELD_MANAGER });
  const metrics = new Metrics();
  const tls =
    config.tlsDir === undefined ? undefined : TlsFolder.openSetting(config.tlsDir, "--tls-dir", true, log);
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    finish = resolve;
  });
  const operator = new Operator({
    client,
    namespace,
    workers: config.workers,
    ...(!config.servedNameCheck && { workerModels: null }),
    ...(config.servedNameCheck && tls && { workerModels: new GrpcWorkerModels({ tls }) }),
    cleanupTimeoutMs: config.cleanupTimeoutSeconds * 1000,
    log,
    metrics,
    ...(config.leaderElect
      ? {
          leaderElection: {
            namespace: config.leaseNamespace ?? connection.namespace,
            name: config.leaseName,
          },
        }
      : {}),
    onLostLeadership: () => void shutdown(1),
  });
  const host = bindAddressOf(config, env);
  const servers: Server[] = [];
  try {
    servers.push(
      await listening(hostPort(host, config.metricsPort), "--metrics-port", () =>
        metrics.serve(config.metricsPort, host),
      ),
    );
    servers.push(
      await listening(hostPort(host, config.healthPort), "--health-port", () =>
        serveHealth(config.healthPort, host, operator),
      ),
    );
  } catch (err) {
    // Nothing runs half started: the operator has not started, and what did listen is closed.
    for (const server of servers) server.close();
    client.close();
    await metrics.shutdown();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  const shutdown = (code: number) => {
    stopping ??= (async () => {
      log.info({ code }, "operator stopping");
      await operator.stop();
      for (const server of servers) server.close();
      client.close();
      await metrics.shutdown();
      finish(code);
    })();
    return stopping;
  };
  operator.start();
  const [metricsServer, healthServer] = servers as [Server, Server];
  log.info(
    {
      server: connection.server,
      namespace: namespace || "<all>",
      bindAddress: host,
      metricsPort: listeningPort(metricsServer),
      healthPort: listeningPort(healthServer),
      leaderElection: config.leaderElect,
    },
    "operator started",
  );
  return {
    operator,
    metricsPort: listeningPort(metricsServer),
    healthPort: listeningPort(healthServer),
    done,
    stop: () => shutdown(0),
  };
}
