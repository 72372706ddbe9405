// Which resources the server serves: the built-in kinds plus those custom resource definitions
// add and remove at run time. Lookups by group/version/plural (URLs) and group/kind (objects).
import { appsKinds } from "./apps-kinds.ts";
import { coreKinds } from "./core-kinds.ts";
import { otherKinds } from "./other-kinds.ts";
import type { ResourceType } from "./resource-type.ts";

export const builtinKinds: readonly ResourceType[] = [...coreKinds, ...appsKinds, ...otherKinds];

export class ResourceRegistry {
  #builtin: ResourceType[];
  #custom = new Map<string, ResourceType[]>();
  #listeners = new Set<() => void>();

  constructor(builtin: readonly ResourceType[] = builtinKinds) {
    this.#builtin = [...builtin];
  }

  all(): ResourceType[] {
    return [...this.#builtin, ...[...this.#custom.values()].flat()];
  }

  /** Group versions in discovery order: core first, then groups by name. */
  groupVersions(): { group: string; versions: string[] }[] {
    const groups = new Map<string, string[]>();
    for (const type of this.all()) {
      const versions = groups.get(type.group) ?? [];
      if (!versions.includes(type.version)) versions.push(type.version);
      groups.set(type.group, versions);
    }
    return [...groups.entries()].map(([group, versions]) => ({
      group,
      versions: versions.sort(compareVersions),
    }));
  }

  byResource(group: string, version: string, plural: string): ResourceType | undefined {
    return this.all().find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.all().find((t) => t.group === group && t.version === version && t.kind === kind);
  }

  inGroupVersion(group: string, version: string): ResourceType[] {
    return this.all().filter((t) => t.group === group && t.version === version);
  }

  /** All versions of one group-resource. */
  versionsOf(group: string, plural: string): ResourceType[] {
    return this.all().filter((t) => t.group === group && t.plural === plural);
  }

  setCustom(crdName: string, types: ResourceType[]): void {
    if (types.length === 0) this.#custom.delete(crdName);
    else this.#custom.set(crdName, types);
    for (const listener of this.#listeners) listener();
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** Kubernetes version priority: GA > beta > alpha, higher numbers first. */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0];
    const stage = m[2] === undefined ? 0 : m[2] === "beta" ? 1 : 2;
    return [stage, -Number(m[1]), -Number(m[3] ?? 0)];
  };
  const [x, y] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}
