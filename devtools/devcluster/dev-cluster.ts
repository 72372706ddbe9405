// The whole dev cluster in one process: the API server (graceful pod deletion on), the
// scheduler, one process kubelet and the built-in controllers, all on the API server's
// in-process ClusterApi; kubectl and helm reach it over HTTPS with the (admin's) kubeconfig. Pods
// get their service account's token volume, and every container KUBERNETES_SERVICE_HOST/PORT and a
// KUBECONFIG with that token (kubelet/service-account-kubeconfig.ts), so programs in pods, such as
// the operator and the router, reach the API as their service accounts, under their RBAC.
import { z } from "zod";
import { type Clock, systemClock } from "../../services/kernel/clock.ts";
import { TesseraError } from "../../services/kernel/errors.ts";
import { createLogger, type Logger } from "../../services/kernel/log.ts";
import { type ApiServer, startApiServer } from "./apiserver/api-server.ts";
import { type ControllerManager, startControllers } from "./controllers/controller-manager.ts";
import type { ProcessLauncher } from "./kubelet/host-process.ts";
import { Kubelet } from "./kubelet/kubelet.ts";
import type { KubeletConfigInput } from "./kubelet/kubelet-config.ts";
import { PodScheduler } from "./kubelet/pod-scheduler.ts";
import type { Pod } from "./objects/pod-types.ts";

export const devClusterConfigSchema = z.object({
  host: z.string().default("127.0.0.1"),
  /** 0 picks a free port. */
  port: z.number().int().min(0).max(65535).default(0),
  /** Keep the cluster's objects in this file; in memory only when absent. */
  stateFile: z.string().optional(),
  /** Write the admin's kubeconfig here. */
  kubeconfigPath: z.string().optional(),
  /** The kubelet's settings (node name, capacity, pod CIDR, root dir, back-off ...). */
  node: z.custom<KubeletConfigInput>((v) => typeof v === "object" && v !== null).default({}),
});

export type DevClusterConfig = z.input<typeof devClusterConfigSchema>;

export interface DevClusterDeps {
  clock?: Clock;
  log?: Logger;
  launcher?: ProcessLauncher;
}

export interface DevCluster {
  readonly server: ApiServer;
  readonly kubelet: Kubelet;
  readonly scheduler: PodScheduler;
  readonly controllers: ControllerManager;
  readonly url: string;
  /** Stops controllers, then every pod process (within graceSeconds when given, at most maxGraceSeconds), then the server. */
  close(options?: { graceSeconds?: number; maxGraceSeconds?: number }): Promise<void>;
}

export async function startDevCluster(
  config: DevClusterConfig = {},
  deps: DevClusterDeps = {},
): Promise<DevCluster> {
  const parsed = devClusterConfigSchema.safeParse(config);
  if (!parsed.success)
    throw TesseraError.invalidArgument("dev cluster config", z.prettifyError(parsed.error));
  const settings = parsed.data;
  const clock = deps.clock ?? systemClock;
  const log = (component: string) => deps.log?.child({ module: component }) ?? createLogger(component);
  const server = await startApiServer(
    {
      host: settings.host,
      port: settings.port,
      gracefulPodDeletion: true,
      serviceAccountAdmission: true,
      ...(settings.stateFile ? { stateFile: settings.stateFile } : {}),
      ...(settings.kubeconfigPath ? { kubeconfigPath: settings.kubeconfigPath } : {}),
    },
    { clock, log: log("devcluster-apiserver") },
  );
  const address = new URL(server.url);
  const kubelet = new Kubelet(
    {
      ...settings.node,
      apiServer: server.url,
      podEnv: {
        KUBERNETES_SERVICE_HOST: address.hostname.replace(/^\[|\]$/g, ""),
        KUBERNETES_SERVICE_PORT: address.port,
        ...settings.node.podEnv,
      },
    },
    {
      api: server.api,
      clock,
      log: log("devcluster-kubelet"),
      serviceAccountTokens: (pod, request) => podToken(server, pod, request),
      ...(deps.launcher ? { launcher: deps.launcher } : {}),
    },
  );
  server.setPodLogSource(kubelet.logs);
  kubelet.start();
  const scheduler = new PodScheduler(server.api, { clock, log: log("devcluster-scheduler") });
  scheduler.start();
  const controllers = startControllers(server.api, {
    clock,
    log: log("devcluster-controllers"),
    rootCaCert: server.caCert,
  });
  return {
    server,
    kubelet,
    scheduler,
    controllers,
    url: server.url,
    close: async (options = {}) => {
      controllers.stop();
      scheduler.stop();
      await kubelet.stop(options);
      await server.close();
    },
  };
}

/** A token of the pod's service account bound to the pod, or undefined while the account does not exist. */
function podToken(
  server: ApiServer,
  pod: Pod,
  request: { audience?: string; expirationSeconds: number },
): string | undefined {
  const namespace = pod.metadata.namespace ?? "default";
  const name = pod.spec.serviceAccountName || "default";
  const uid = server.api.store.get("serviceaccounts", namespace, name)?.metadata.uid;
  if (!uid) return undefined;
  const subject = {
    namespace,
    serviceAccount: { name, uid },
    pod: { name: pod.metadata.name ?? "", uid: pod.metadata.uid ?? "" },
  };
  const audiences = request.audience ? { audiences: [request.audience] } : {};
  return server.serviceAccountToken(subject, { expirationSeconds: request.expirationSeconds, ...audiences })
    .token;
}
