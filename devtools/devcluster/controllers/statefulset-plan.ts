// The next step of a StatefulSet as a pure function. Pods are "<name>-<ordinal>".
// OrderedReady (the default) does one thing at a time: replace a failed pod, create the lowest
// missing ordinal only once every lower one is Running and Ready, remove the highest ordinal
// beyond replicas only once the previous removal finished. Parallel creates and removes all at
// once. RollingUpdate (after everything is ready) deletes the highest ordinal >= partition
// whose revision is not the update revision; the controller recreates it from the new template.
export interface OrdinalPod {
  ordinal: number;
  name: string;
  revision: string;
  ready: boolean;
  terminating: boolean;
  failed: boolean;
}

export interface StatefulSetPlanInput {
  replicas: number;
  parallel: boolean;
  rollingUpdate: boolean;
  partition: number;
  updateRevision: string;
  pods: readonly OrdinalPod[];
}

export interface StatefulSetPlan {
  create: number[];
  delete: string[];
}

export function planStatefulSet(input: StatefulSetPlanInput): StatefulSetPlan {
  const plan: StatefulSetPlan = { create: [], delete: [] };
  const byOrdinal = new Map(input.pods.map((p) => [p.ordinal, p]));
  const failed = input.pods.filter((p) => p.failed && !p.terminating);
  if (failed.length > 0) return { create: [], delete: failed.map((p) => p.name) };
  let allReady = true;
  for (let ordinal = 0; ordinal < input.replicas; ordinal++) {
    const pod = byOrdinal.get(ordinal);
    if (!pod) {
      plan.create.push(ordinal);
      allReady = false;
      if (!input.parallel) return plan;
    } else if (pod.terminating || !pod.ready) {
      allReady = false;
      if (!input.parallel) return plan;
    }
  }
  const condemned = input.pods
    .filter((p) => p.ordinal >= input.replicas)
    .sort((a, b) => b.ordinal - a.ordinal);
  if (condemned.length > 0) {
    if (input.parallel) plan.delete.push(...condemned.filter((p) => !p.terminating).map((p) => p.name));
    else if (!condemned.some((p) => p.terminating) && condemned[0]) plan.delete.push(condemned[0].name);
    return plan;
  }
  if (!input.rollingUpdate || !allReady || input.pods.some((p) => p.terminating)) return plan;
  for (let ordinal = input.replicas - 1; ordinal >= input.partition; ordinal--) {
    const pod = byOrdinal.get(ordinal);
    if (pod && pod.revision !== input.updateRevision) {
      plan.delete.push(pod.name);
      break;
    }
  }
  return plan;
}
