// The one config object of an operator process, validated at start-up: where the API is, which
// namespace to watch, leader election, and the metrics and health ports.
import { z } from "zod";
import { type Result, TesseraError } from "../services/kernel/errors.ts";

const port = z.int().min(0).max(65_535);

export const operatorConfigSchema = z
  .object({
    /** Kubeconfig file; unset: $KUBECONFIG, then the in-cluster service account, then ~/.kube/config. */
    kubeconfig: z.string().min(1).optional(),
    /** Kubeconfig context; unset: its current context. */
    context: z.string().min(1).optional(),
    /** Namespace to watch; unset: the kubeconfig context's (or the pod's) namespace. */
    namespace: z.string().min(1).optional(),
    /** Watch every namespace (needs the ClusterRole from operator/deploy/rbac-cluster.yaml). */
    allNamespaces: z.boolean().default(false),
    /** Run only while holding the Lease, so several replicas can run for availability. */
    leaderElect: z.boolean().default(true),
    /** Namespace of the Lease; unset: the operator's own namespace. */
    leaseNamespace: z.string().min(1).optional(),
    leaseName: z.string().min(1).default("tessera-operator"),
    /** Prometheus /metrics; 0 picks a free port. */
    metricsPort: port.default(8080),
    /** /healthz and /readyz; 0 picks a free port. */
    healthPort: port.default(8081),
    /** Interface of the metrics and health ports; unset: see bindAddressOf. */
    bindAddress: z.string().min(1).optional(),
    /** Reconciles running at once per kind. */
    workers: z.int().min(1).max(64).default(4),
    /**
     * Ask each new ready entry worker which model it serves before calling its model Ready (the operator
     * must reach the workers' gRPC port); off: Ready on pod readiness alone.
     */
    servedNameCheck: z.boolean().default(true),
    /**
     * Mutual TLS for those ListModels calls to workers that serve it (spec.tls): a mounted TLS Secret
     * folder whose certificate the models' CA signed; unset: plaintext.
     */
    tlsDir: z.string().min(1).optional(),
    /** How long a deleted model's cleanup may take before its finalizer is removed anyway. */
    cleanupTimeoutSeconds: z.int().min(1).max(3_600).default(60),
  })
  .refine((c) => !(c.allNamespaces && c.namespace), {
    path: ["namespace"],
    message: "give --namespace or --all-namespaces, not both",
  })
  .refine((c) => c.metricsPort === 0 || c.metricsPort !== c.healthPort, {
    path: ["healthPort"],
    message: "must differ from the metrics port",
  });

export type OperatorConfig = z.infer<typeof operatorConfigSchema>;

/** Parses a raw config; the error names the first bad field (e.g. `workers: ...`). */
export function parseOperatorConfig(raw: unknown): Result<OperatorConfig> {
  const parsed = operatorConfigSchema.safeParse(raw);
  if (parsed.success) return { value: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    error: TesseraError.invalidArgument(issue?.path.join(".") || "config", issue?.message ?? "invalid"),
  };
}

/**
 * Where the metrics and health ports listen: the config's bindAddress, else every interface in a pod
 * ($KUBERNETES_SERVICE_HOST set: the kubelet probes and Prometheus scrapes the pod's IP), else loopback
 * 127.0.0.1 only. Out of cluster the operator shares the host with the dev cluster's pods, which listen
 * on loopback addresses of their own (127.x.y.z, never 127.0.0.1): binding 0.0.0.0 there would take
 * ports 8080 and 8081 on every pod's address, and a router pod on the same port could not start.
 */
export function bindAddressOf(config: OperatorConfig, env: Record<string, string | undefined>): string {
  return config.bindAddress ?? (env["KUBERNETES_SERVICE_HOST"] ? "0.0.0.0" : "127.0.0.1");
}
