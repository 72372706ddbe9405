// How the fields of a kind merge: which lists are maps keyed by some fields (containers by name),
// which are sets (finalizers), which are atomic. Strategic merge patch and server-side apply both
// read it; built-in kinds declare it by hand, custom resources derive it from their schema.

/** keyDefaults: values a key field takes when absent (a port's protocol is TCP). */
export type ListType =
  | { type: "map"; keys: string[]; keyDefaults?: Record<string, string | number> }
  | { type: "set" }
  | { type: "atomic" };

export interface TypeInfo {
  /** Known fields of an object. */
  fields?: Record<string, TypeInfo>;
  /** The element type of a list, or the value type of a map with arbitrary keys. */
  elements?: TypeInfo;
  /** For lists: how elements are identified. Unknown lists are atomic. */
  list?: ListType;
  /** An atomic map (or struct) is replaced as a whole. */
  atomic?: boolean;
  /** Strategic merge patch `$retainKeys` (union types such as a Deployment strategy). */
  retainKeys?: boolean;
}

export function fieldInfo(info: TypeInfo | undefined, key: string): TypeInfo | undefined {
  return info?.fields?.[key] ?? info?.elements;
}

export const mapList = (
  keys: string[],
  elements?: TypeInfo,
  keyDefaults?: Record<string, string | number>,
): TypeInfo => ({
  list: { type: "map", keys, ...(keyDefaults ? { keyDefaults } : {}) },
  ...(elements ? { elements } : {}),
});

export const setList: TypeInfo = { list: { type: "set" } };
export const atomicList: TypeInfo = { list: { type: "atomic" } };

/** Fields every object's metadata has. */
export const objectMetaInfo: TypeInfo = {
  fields: {
    ownerReferences: mapList(["uid"]),
    finalizers: setList,
    managedFields: atomicList,
  },
};

export function withMetadata(fields: Record<string, TypeInfo>): TypeInfo {
  return { fields: { metadata: objectMetaInfo, ...fields } };
}
