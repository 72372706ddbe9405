// The files of a projected volume, as the kubelet writes them: a service account's token (from the
// API server, re-issued once 80% of its lifetime has passed, as the kubelet's token manager does),
// keys of ConfigMaps and Secrets, and downward API fields of the pod's metadata. The service
// account's `kube-api-access-*` volume is one (token, ca.crt from kube-root-ca.crt, namespace).
import path from "node:path";
import { Code, type Result, TesseraError } from "../../../services/kernel/errors.ts";
import type { KeyToPath, Pod, VolumeProjection } from "../objects/pod-types.ts";
import { type EnvSources, fieldValue } from "./env-resolver.ts";

/** Issues a token for the pod's service account (bound to the pod); undefined when it cannot. */
export type TokenIssuer = (request: { audience?: string; expirationSeconds: number }) => string | undefined;

export interface ProjectionSources extends EnvSources {
  serviceAccountToken?: TokenIssuer;
  /** The time tokens are judged fresh by; Date.now() when absent. */
  now?(): number;
}

/** Whether a token (a JWT) is past 80% of its lifetime, or unreadable. */
export function tokenNeedsRefresh(token: string | undefined, now: number): boolean {
  if (!token) return true;
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()) as {
      iat?: number;
      exp?: number;
    };
    if (typeof payload.iat !== "number" || typeof payload.exp !== "number") return true;
    return now / 1000 >= payload.iat + 0.8 * (payload.exp - payload.iat);
  } catch {
    return true;
  }
}

function keyed(
  data: Record<string, string> | undefined,
  items: KeyToPath[] | undefined,
  what: string,
  optional: boolean,
  files: Map<string, string>,
): TesseraError | undefined {
  if (!data) return optional ? undefined : TesseraError.notFound(`${what} not found`);
  for (const item of items ?? Object.keys(data).map((key) => ({ key, path: key }))) {
    if (Object.hasOwn(data, item.key)) files.set(path.normalize(item.path), data[item.key] ?? "");
    else if (!optional) return TesseraError.notFound(`${what} has no key ${item.key}`);
  }
  return undefined;
}

/**
 * Relative path -> text of a projected volume. `current`: the files written before, whose token
 * is kept while it is fresh.
 */
export function projectedFiles(
  pod: Pod,
  sources: readonly VolumeProjection[],
  from: ProjectionSources,
  current: ReadonlyMap<string, string> = new Map(),
): Result<Map<string, string>> {
  const files = new Map<string, string>();
  for (const source of sources) {
    let error: TesseraError | undefined;
    if (source.serviceAccountToken) {
      const { path: file, audience } = source.serviceAccountToken;
      const kept = current.get(path.normalize(file));
      if (kept !== undefined && !tokenNeedsRefresh(kept, from.now?.() ?? Date.now()))
        files.set(path.normalize(file), kept);
      else {
        const expirationSeconds = source.serviceAccountToken.expirationSeconds ?? 3600;
        const token = from.serviceAccountToken?.({ ...(audience ? { audience } : {}), expirationSeconds });
        if (token === undefined)
          error = new TesseraError(
            Code.UNAVAILABLE,
            `cannot issue a token for service account "${pod.spec.serviceAccountName ?? "default"}"`,
          );
        else files.set(path.normalize(file), token);
      }
    } else if (source.configMap) {
      const { name, items, optional } = source.configMap;
      error = keyed(from.configMap(name), items, `configmap "${name}"`, optional === true, files);
    } else if (source.secret) {
      const { name, items, optional } = source.secret;
      error = keyed(from.secret(name), items, `secret "${name}"`, optional === true, files);
    } else if (source.downwardAPI) {
      for (const item of source.downwardAPI.items ?? []) {
        const fieldPath = item.fieldRef?.fieldPath ?? "";
        const value = fieldPath.startsWith("metadata.")
          ? fieldValue(pod, fieldPath, { podIP: "", hostIP: "", allocatable: {} })
          : {
              error: TesseraError.invalidArgument(
                "downwardAPI.items.fieldRef",
                `unsupported fieldPath "${fieldPath}"`,
              ),
            };
        if (value.error) {
          error = value.error;
          break;
        }
        files.set(path.normalize(item.path), value.value);
      }
    } else
      error = TesseraError.invalidArgument("projected.sources", "a source this kubelet does not support");
    if (error) return { error };
  }
  return { value: files };
}
