// Merge keys of the Pod template, shared by Pods and the workloads that embed a template.
import { atomicList, mapList, objectMetaInfo, setList, type TypeInfo } from "./type-info.ts";

const container: TypeInfo = {
  fields: {
    ports: mapList(["containerPort", "protocol"], undefined, { protocol: "TCP" }),
    env: mapList(["name"]),
    volumeMounts: mapList(["mountPath"]),
    volumeDevices: mapList(["devicePath"]),
    command: atomicList,
    args: atomicList,
    envFrom: atomicList,
    resizePolicy: mapList(["resourceName"]),
  },
};

const volume: TypeInfo = { retainKeys: true };

export const podSpecInfo: TypeInfo = {
  fields: {
    containers: mapList(["name"], container),
    initContainers: mapList(["name"], container),
    ephemeralContainers: mapList(["name"], container),
    volumes: mapList(["name"], volume),
    imagePullSecrets: mapList(["name"]),
    hostAliases: mapList(["ip"]),
    tolerations: atomicList,
    topologySpreadConstraints: mapList(["topologyKey", "whenUnsatisfiable"]),
    schedulingGates: mapList(["name"]),
    resourceClaims: mapList(["name"]),
    readinessGates: atomicList,
  },
};

export const podStatusInfo: TypeInfo = {
  fields: {
    conditions: mapList(["type"]),
    podIPs: mapList(["ip"]),
    hostIPs: mapList(["ip"]),
    containerStatuses: atomicList,
    initContainerStatuses: atomicList,
  },
};

export const podTemplateInfo: TypeInfo = { fields: { metadata: objectMetaInfo, spec: podSpecInfo } };

export const conditionsStatusInfo: TypeInfo = { fields: { conditions: mapList(["type"]) } };

export const stringSet = setList;
