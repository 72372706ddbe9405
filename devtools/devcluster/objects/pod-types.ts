// A typed subset of core/v1 Pod: what the kubelet, the scheduler and the controllers read and
// write. Objects come from the API as plain JSON; these types describe them, nothing checks them.
import type { KubeObject, ObjectMeta } from "../../../services/kube/kube-object.ts";

export type Quantity = string | number;
export type ResourceList = Record<string, Quantity>;

export interface ObjectFieldSelector {
  fieldPath: string;
  apiVersion?: string;
}

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: Quantity;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: ObjectFieldSelector;
    configMapKeyRef?: KeySelector;
    secretKeyRef?: KeySelector;
    resourceFieldRef?: ResourceFieldSelector;
  };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface HttpHeader {
  name: string;
  value: string;
}

export interface Probe {
  exec?: { command?: string[] };
  httpGet?: {
    path?: string;
    port: number | string;
    host?: string;
    scheme?: "HTTP" | "HTTPS";
    httpHeaders?: HttpHeader[];
  };
  tcpSocket?: { port: number | string; host?: string };
  grpc?: { port: number; service?: string };
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: ContainerPort[];
  resources?: { requests?: ResourceList; limits?: ResourceList };
  volumeMounts?: VolumeMount[];
  startupProbe?: Probe;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  /** Init containers with restartPolicy Always are sidecars (not supported: run as plain init). */
  restartPolicy?: string;
}

export interface KeyToPath {
  key: string;
  path: string;
}

export interface Volume {
  name: string;
  emptyDir?: Record<string, unknown>;
  hostPath?: { path: string; type?: string };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
  secret?: { secretName: string; items?: KeyToPath[]; optional?: boolean };
  projected?: { sources: VolumeProjection[]; defaultMode?: number };
}

/** One source of a projected volume (a service account's token volume has the first three). */
export interface VolumeProjection {
  serviceAccountToken?: { path: string; audience?: string; expirationSeconds?: number };
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: { path: string; fieldRef?: { fieldPath: string } }[] };
  secret?: { name: string; items?: KeyToPath[]; optional?: boolean };
}

export type RestartPolicy = "Always" | "OnFailure" | "Never";

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  schedulerName?: string;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  hostname?: string;
  subdomain?: string;
  readinessGates?: { conditionType: string }[];
}

export type ConditionStatus = "True" | "False" | "Unknown";

export interface PodCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}

export interface ContainerStateRunning {
  startedAt?: string;
}

export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}

export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}

export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
}

export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";

export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  qosClass?: string;
}

export interface Pod extends KubeObject {
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

export interface PodTemplate {
  metadata?: ObjectMeta;
  spec: PodSpec;
}

export const asPod = (object: KubeObject): Pod => object as Pod;
