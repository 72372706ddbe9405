// A dev cluster API server for operator specs: HTTPS like a real cluster, the operator's CRDs
// installed, clients built from its kubeconfig as the operator builds its own, and the in-process API
// for test setup (what a kubelet would do: pod status).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type ApiServer, startApiServer } from "../../devtools/devcluster/apiserver/api-server.ts";
import { crdOf } from "../../services/api/crd-builder.ts";
import { FIELD_MANAGER } from "../../services/api/group.ts";
import { KINDS } from "../../services/api/kinds.ts";
import { createLogger } from "../../services/kernel/log.ts";
import { HttpsKubeClient } from "../../services/kube/https-client.ts";
import type { KubeObject } from "../../services/kube/kube-object.ts";
import { loadClusterConnection } from "../../services/kube/kubeconfig.ts";

export const CRDS = { group: "apiextensions.k8s.io", version: "v1", resource: "customresourcedefinitions" };

export interface DevCluster {
  server: ApiServer;
  kubeconfig: string;
  /** A client with the operator's field manager, or another (a user's, e.g. "kubectl"). */
  client(fieldManager?: string): HttpsKubeClient;
  close(): Promise<void>;
}

export async function startDevCluster(
  options: { crds?: boolean; eventWindow?: number } = {},
): Promise<DevCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-operator-"));
  const server = await startApiServer(options.eventWindow ? { eventWindow: options.eventWindow } : {}, {
    log: createLogger("devcluster", process.env["TESSERA_LOG_LEVEL"] ?? "warn"),
  });
  const kubeconfig = path.join(dir, "kubeconfig");
  await server.writeKubeconfig(kubeconfig);
  if (options.crds !== false)
    for (const kind of KINDS) server.api.create(CRDS, "", crdOf(kind) as unknown as KubeObject);
  const clients: HttpsKubeClient[] = [];
  return {
    server,
    kubeconfig,
    client: (fieldManager = FIELD_MANAGER) => {
      const connection = loadClusterConnection({ kubeconfig, env: {} });
      const client = new HttpsKubeClient(connection, { fieldManager });
      clients.push(client);
      return client;
    },
    close: async () => {
      for (const client of clients) client.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
