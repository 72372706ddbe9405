// The EndpointSlices a Service with a selector should have, as a pure function: one endpoint per
// selected pod that has an IP and is not finished (ready = Ready and not terminating, or always
// with publishNotReadyAddresses; serving = Ready; terminating), and the Service's ports with
// named targetPorts resolved against each pod's container ports. Pods whose ports resolve
// differently land in different slices, as in Kubernetes.
import { isPodReady } from "../objects/pod-readiness.ts";
import type { Pod } from "../objects/pod-types.ts";
import type { Endpoint, EndpointPort, Service } from "../objects/workload-types.ts";

export interface SliceContent {
  endpoints: Endpoint[];
  ports: EndpointPort[];
}

function podPorts(service: Service, pod: Pod): EndpointPort[] | undefined {
  const ports: EndpointPort[] = [];
  for (const port of service.spec.ports ?? []) {
    const target = port.targetPort ?? port.port;
    let number: number | undefined;
    if (typeof target === "number") number = target;
    else if (/^\d+$/.test(target)) number = Number(target);
    else
      number = pod.spec.containers
        .flatMap((c) => c.ports ?? [])
        .find((p) => p.name === target && (p.protocol ?? "TCP") === (port.protocol ?? "TCP"))?.containerPort;
    if (number === undefined) continue;
    ports.push({
      name: port.name ?? "",
      port: number,
      protocol: port.protocol ?? "TCP",
      ...(port.appProtocol ? { appProtocol: port.appProtocol } : {}),
    });
  }
  return ports;
}

export function endpointOf(service: Service, pod: Pod): Endpoint {
  const terminating = pod.metadata.deletionTimestamp !== undefined;
  const ready = isPodReady(pod);
  return {
    addresses: [pod.status?.podIP ?? ""],
    conditions: {
      ready: service.spec.publishNotReadyAddresses === true || (ready && !terminating),
      serving: ready,
      terminating,
    },
    ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    // As Kubernetes: the pod's hostname names it within the Service its subdomain names (pod DNS).
    ...(pod.spec.hostname && pod.spec.subdomain === service.metadata.name
      ? { hostname: pod.spec.hostname }
      : {}),
    targetRef: {
      kind: "Pod",
      namespace: pod.metadata.namespace ?? "",
      name: pod.metadata.name ?? "",
      uid: pod.metadata.uid ?? "",
    },
  };
}

/** The slices' contents, sorted by port set; endpoints sorted by address. */
export function desiredSlices(service: Service, pods: readonly Pod[]): SliceContent[] {
  const groups = new Map<string, SliceContent>();
  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (!pod.status?.podIP || phase === "Succeeded" || phase === "Failed") continue;
    const ports = podPorts(service, pod) ?? [];
    const key = JSON.stringify(ports);
    const group = groups.get(key) ?? { endpoints: [], ports };
    group.endpoints.push(endpointOf(service, pod));
    groups.set(key, group);
  }
  const slices = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, s]) => s);
  for (const slice of slices)
    slice.endpoints.sort((a, b) => (a.addresses[0] ?? "").localeCompare(b.addresses[0] ?? ""));
  return slices.length > 0 ? slices : [{ endpoints: [], ports: podPorts(service, emptyPod) ?? [] }];
}

const emptyPod: Pod = { apiVersion: "v1", kind: "Pod", metadata: {}, spec: { containers: [] } };
