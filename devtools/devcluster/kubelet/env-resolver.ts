// A container's environment as the kubelet builds it: the node's base variables, then envFrom,
// then env (value, fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef), with $(VAR)
// references expanded as Kubernetes does ($$ escapes). Missing non-optional sources are errors
// the kubelet reports as CreateContainerConfigError and retries.
import { type Result, TesseraError } from "../../../services/kernel/errors.ts";
import type { Container, EnvVar, Pod } from "../objects/pod-types.ts";
import { parseQuantity } from "../objects/quantity.ts";

export interface EnvSources {
  /** A ConfigMap's data in the pod's namespace, undefined when it does not exist. */
  configMap(name: string): Record<string, string> | undefined;
  /** A Secret's data, decoded, undefined when it does not exist. */
  secret(name: string): Record<string, string> | undefined;
}

export interface PodFacts {
  podIP: string;
  hostIP: string;
  /** Node allocatable, for resourceFieldRef limits a container does not set. */
  allocatable: Record<string, number>;
}

/** Expands $(NAME) from env; unknown names stay as written, $$(NAME) becomes $(NAME). */
export function expandVars(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === "$$") return "$";
    return name !== undefined && Object.hasOwn(env, name) ? (env[name] ?? "") : match;
  });
}

const MAP_FIELD = /^metadata\.(labels|annotations)\['(.+)'\]$/;

export function fieldValue(pod: Pod, path: string, facts: PodFacts): Result<string> {
  const meta = pod.metadata;
  const mapField = MAP_FIELD.exec(path);
  if (mapField) {
    const map = (mapField[1] === "labels" ? meta.labels : meta.annotations) ?? {};
    return { value: map[mapField[2] ?? ""] ?? "" };
  }
  const values: Record<string, string | undefined> = {
    "metadata.name": meta.name,
    "metadata.namespace": meta.namespace,
    "metadata.uid": meta.uid,
    "metadata.labels": formatMap(meta.labels),
    "metadata.annotations": formatMap(meta.annotations),
    "spec.nodeName": pod.spec.nodeName,
    "spec.serviceAccountName": pod.spec.serviceAccountName ?? "default",
    "status.hostIP": facts.hostIP,
    "status.hostIPs": facts.hostIP,
    "status.podIP": facts.podIP,
    "status.podIPs": facts.podIP,
  };
  if (!Object.hasOwn(values, path))
    return { error: TesseraError.invalidArgument("fieldRef", `unsupported fieldPath "${path}"`) };
  return { value: values[path] ?? "" };
}

function formatMap(map: Record<string, string> | undefined): string {
  return Object.entries(map ?? {})
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join("\n");
}

function resourceValue(
  container: Container,
  resource: string,
  divisor: string | number | undefined,
  facts: PodFacts,
) {
  const [kind, name = ""] = resource.split(/\.(.*)/s);
  const list = kind === "requests" ? container.resources?.requests : container.resources?.limits;
  const declared = parseQuantity(list?.[name]);
  const amount = declared ?? (kind === "limits" ? (facts.allocatable[name] ?? 0) : 0);
  const unit = parseQuantity(divisor) ?? 1;
  return String(Math.ceil(amount / unit));
}

function envVarValue(
  pod: Pod,
  container: Container,
  variable: EnvVar,
  facts: PodFacts,
  sources: EnvSources,
  env: Record<string, string>,
): Result<string | undefined> {
  const from = variable.valueFrom;
  if (!from) return { value: expandVars(variable.value ?? "", env) };
  if (from.fieldRef) return fieldValue(pod, from.fieldRef.fieldPath, facts);
  if (from.resourceFieldRef)
    return {
      value: resourceValue(container, from.resourceFieldRef.resource, from.resourceFieldRef.divisor, facts),
    };
  const namespace = pod.metadata.namespace ?? "default";
  if (from.configMapKeyRef) {
    const { name = "", key, optional } = from.configMapKeyRef;
    return keyOf(
      sources.configMap(name),
      "configmap",
      "ConfigMap",
      `${namespace}/${name}`,
      name,
      key,
      optional,
    );
  }
  if (from.secretKeyRef) {
    const { name = "", key, optional } = from.secretKeyRef;
    return keyOf(sources.secret(name), "secret", "Secret", `${namespace}/${name}`, name, key, optional);
  }
  return { value: "" };
}

function keyOf(
  data: Record<string, string> | undefined,
  lower: string,
  kind: string,
  qualified: string,
  name: string,
  key: string,
  optional: boolean | undefined,
): Result<string | undefined> {
  if (!data)
    return optional ? { value: undefined } : { error: TesseraError.notFound(`${lower} "${name}" not found`) };
  if (!Object.hasOwn(data, key))
    return optional
      ? { value: undefined }
      : { error: TesseraError.notFound(`couldn't find key ${key} in ${kind} ${qualified}`) };
  return { value: data[key] ?? "" };
}

/** The environment of one container: base, then envFrom, then env, in order. */
export function resolveEnv(
  pod: Pod,
  container: Container,
  facts: PodFacts,
  sources: EnvSources,
  base: Record<string, string>,
): Result<Record<string, string>> {
  const env: Record<string, string> = { ...base };
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) continue;
    const data = from.configMapRef ? sources.configMap(ref.name) : sources.secret(ref.name);
    if (!data) {
      if (ref.optional) continue;
      const what = from.configMapRef ? "configmap" : "secret";
      return { error: TesseraError.notFound(`${what} "${ref.name}" not found`) };
    }
    for (const [key, value] of Object.entries(data)) env[`${from.prefix ?? ""}${key}`] = value;
  }
  for (const variable of container.env ?? []) {
    const resolved = envVarValue(pod, container, variable, facts, sources, env);
    if (resolved.error) return { error: resolved.error };
    if (resolved.value !== undefined) env[variable.name] = resolved.value;
  }
  return { value: env };
}
