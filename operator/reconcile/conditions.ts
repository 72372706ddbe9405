// Status conditions (Ready, Progressing, Degraded) as metav1.Condition: a condition's
// lastTransitionTime changes only when its status does, so re-computing an unchanged condition
// leaves the status object equal (no write, no watch event, no hot loop).
import type { Condition } from "../../services/api/common-types.ts";

export type ConditionType = "Ready" | "Progressing" | "Degraded";

export interface ConditionState {
  type: ConditionType;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
}

export function withTransitions(
  wanted: readonly ConditionState[],
  previous: readonly Condition[] | undefined,
  generation: number,
  now: string,
): Condition[] {
  return wanted.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    const lastTransitionTime = before && before.status === c.status ? before.lastTransitionTime : now;
    return { ...c, lastTransitionTime, observedGeneration: generation };
  });
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: ConditionType,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
