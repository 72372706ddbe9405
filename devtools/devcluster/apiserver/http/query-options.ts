// Query parameters of the Kubernetes REST API, translated to ClusterApi options.

import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import type {
  DeleteOptions,
  ListOptions,
  PropagationPolicy,
  WatchOptions,
  WriteOptions,
} from "../cluster/api-types.ts";
import type { FieldValidation } from "../cluster/custom-object-validation.ts";
import { apiErrors } from "../core/api-status.ts";
import { isJsonObject } from "../core/json-object.ts";

const VALIDATIONS = new Set<FieldValidation>(["Strict", "Warn", "Ignore"]);
const POLICIES = new Set<PropagationPolicy>(["Background", "Foreground", "Orphan"]);

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function integer(query: URLSearchParams, key: string): number | undefined {
  const raw = query.get(key);
  if (raw === null || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw apiErrors.badRequest(`invalid ${key}: ${raw}`);
  return value;
}

export function listOptions(query: URLSearchParams, namespace: string | undefined): ListOptions {
  return {
    ...optional("namespace", namespace),
    ...optional("labelSelector", query.get("labelSelector") ?? undefined),
    ...optional("fieldSelector", query.get("fieldSelector") ?? undefined),
    ...optional("limit", integer(query, "limit")),
    ...optional("continue", query.get("continue") || undefined),
  };
}

export function watchOptions(query: URLSearchParams, namespace: string | undefined): WatchOptions {
  return {
    ...optional("namespace", namespace),
    ...optional("labelSelector", query.get("labelSelector") ?? undefined),
    ...optional("fieldSelector", query.get("fieldSelector") ?? undefined),
    ...optional("resourceVersion", query.get("resourceVersion") ?? undefined),
    ...(query.get("sendInitialEvents") === "true" ? { sendInitialEvents: true } : {}),
  };
}

export function isWatch(query: URLSearchParams): boolean {
  const watch = query.get("watch");
  return watch === "true" || watch === "1";
}

export function writeOptions(query: URLSearchParams, userAgent: string | undefined): WriteOptions {
  const validation = query.get("fieldValidation") ?? "";
  if (validation !== "" && !VALIDATIONS.has(validation as FieldValidation)) {
    throw apiErrors.badRequest(`fieldValidation must be one of Ignore, Warn, Strict; got ${validation}`);
  }
  const dryRun = query.getAll("dryRun");
  if (dryRun.some((d) => d !== "All")) throw apiErrors.badRequest("dryRun may only be All");
  return {
    fieldManager: query.get("fieldManager") || defaultManager(userAgent),
    ...(validation !== "" ? { fieldValidation: validation as FieldValidation } : {}),
    ...(dryRun.length > 0 ? { dryRun: true } : {}),
    ...(query.get("force") === "true" ? { force: true } : {}),
  };
}

/** Managers default to the client's user agent product, as on real Kubernetes ("kubectl", "helm"). */
function defaultManager(userAgent: string | undefined): string {
  const product = (userAgent ?? "unknown").split("/")[0] ?? "unknown";
  return product.slice(0, 128) || "unknown";
}

/** DeleteOptions from the body (JSON or protobuf, decoded before) merged with query parameters. */
export function deleteOptions(query: URLSearchParams, body: JsonValue | undefined): DeleteOptions {
  const fromBody = isJsonObject(body) ? body : {};
  const policy = (query.get("propagationPolicy") ?? fromBody["propagationPolicy"] ?? undefined) as
    | string
    | undefined;
  const orphan = query.get("orphanDependents") ?? fromBody["orphanDependents"];
  const effective = policy ?? (orphan === true || orphan === "true" ? "Orphan" : undefined);
  if (effective !== undefined && !POLICIES.has(effective as PropagationPolicy)) {
    throw apiErrors.badRequest(
      `propagationPolicy must be one of Background, Foreground, Orphan; got ${effective}`,
    );
  }
  const grace =
    integer(query, "gracePeriodSeconds") ??
    (typeof fromBody["gracePeriodSeconds"] === "number" ? fromBody["gracePeriodSeconds"] : undefined);
  const dryRun =
    query.getAll("dryRun").length > 0 || (Array.isArray(fromBody["dryRun"]) && fromBody["dryRun"].length > 0);
  const pre = isJsonObject(fromBody["preconditions"]) ? fromBody["preconditions"] : undefined;
  return {
    ...optional("propagationPolicy", effective as PropagationPolicy | undefined),
    ...optional("gracePeriodSeconds", grace),
    ...(dryRun ? { dryRun: true } : {}),
    ...(pre
      ? {
          preconditions: {
            ...optional("uid", typeof pre["uid"] === "string" ? pre["uid"] : undefined),
            ...optional(
              "resourceVersion",
              typeof pre["resourceVersion"] === "string" ? pre["resourceVersion"] : undefined,
            ),
          },
        }
      : {}),
  };
}
