// Typed subsets of apps/v1 workloads, core/v1 Service and discovery/v1 EndpointSlice, as the
// built-in controllers read and write them.
import type { KubeObject, ObjectMeta } from "../../../services/kube/kube-object.ts";
import type { StructuredLabelSelector } from "../apiserver/selectors/label-selector.ts";
import type { ConditionStatus, PodTemplate } from "./pod-types.ts";

export type IntOrString = number | string;

export interface WorkloadCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export interface DeploymentSpec {
  replicas?: number;
  selector: StructuredLabelSelector;
  template: PodTemplate;
  strategy?: {
    type?: "RollingUpdate" | "Recreate";
    rollingUpdate?: { maxSurge?: IntOrString; maxUnavailable?: IntOrString };
  };
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  progressDeadlineSeconds?: number;
  paused?: boolean;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: WorkloadCondition[];
}

export interface Deployment extends KubeObject {
  metadata: ObjectMeta;
  spec: DeploymentSpec;
  status?: DeploymentStatus;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
}

export interface ReplicaSet extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    replicas?: number;
    selector: StructuredLabelSelector;
    template: PodTemplate;
    minReadySeconds?: number;
  };
  status?: ReplicaSetStatus;
}

export interface StatefulSetSpec {
  replicas?: number;
  selector: StructuredLabelSelector;
  template: PodTemplate;
  serviceName?: string;
  podManagementPolicy?: "OrderedReady" | "Parallel";
  updateStrategy?: { type?: "RollingUpdate" | "OnDelete"; rollingUpdate?: { partition?: number } };
  volumeClaimTemplates?: { metadata?: ObjectMeta }[];
  minReadySeconds?: number;
}

export interface StatefulSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
  collisionCount?: number;
}

export interface StatefulSet extends KubeObject {
  metadata: ObjectMeta;
  spec: StatefulSetSpec;
  status?: StatefulSetStatus;
}

export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: IntOrString;
  protocol?: string;
  appProtocol?: string;
}

export interface Service extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    selector?: Record<string, string>;
    ports?: ServicePort[];
    clusterIP?: string;
    publishNotReadyAddresses?: boolean;
    type?: string;
  };
}

export interface Endpoint {
  addresses: string[];
  conditions: { ready: boolean; serving: boolean; terminating: boolean };
  nodeName?: string;
  hostname?: string;
  targetRef?: { kind: string; namespace: string; name: string; uid: string };
}

export interface EndpointPort {
  name: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

export interface EndpointSlice extends KubeObject {
  metadata: ObjectMeta;
  addressType: "IPv4";
  endpoints: Endpoint[];
  ports: EndpointPort[];
}
