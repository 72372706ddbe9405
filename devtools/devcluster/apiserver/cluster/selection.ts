// Compiles the namespace, label and field filters of a list or watch into one predicate.

import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { apiErrors } from "../core/api-status.ts";
import { matchesFields, parseFieldSelector } from "../selectors/field-selector.ts";
import { matchesLabels, parseLabelSelector } from "../selectors/label-selector.ts";

export type ObjectFilter = (object: KubeObject) => boolean;

export function compileFilter(options: {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
}): ObjectFilter {
  const labels = parseLabelSelector(options.labelSelector);
  if (labels.error) throw apiErrors.badRequest(`unable to parse requirement: ${labels.error.message}`);
  const fields = parseFieldSelector(options.fieldSelector);
  if (fields.error) throw apiErrors.badRequest(fields.error.message);
  const namespace = options.namespace;
  return (object) =>
    (namespace === undefined || (object.metadata.namespace ?? "") === namespace) &&
    matchesLabels(labels.value, object.metadata.labels) &&
    matchesFields(fields.value, object);
}
