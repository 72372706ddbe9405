// Builds a CustomResourceDefinition from a kind's zod spec and status schemas: one served and stored
// version, status (and optionally scale) subresources, printer columns, and root CEL rules.
import type { z } from "zod";
import { GROUP, VERSION } from "./group.ts";
import { type CelRule, type OpenApiSchema, structuralSchema } from "./schema-kit.ts";

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  description: string;
  priority?: number;
}

export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  spec: z.ZodType;
  status: z.ZodType;
  columns: PrinterColumn[];
  /** Rules on the whole object (they may read metadata.name). */
  rules?: CelRule[];
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath: string };
}

export function crdOf(def: KindDefinition): Record<string, unknown> {
  const openAPIV3Schema: OpenApiSchema = {
    type: "object",
    description: def.description,
    required: ["spec"],
    properties: {
      apiVersion: { type: "string", description: "APIVersion of this representation of the object." },
      kind: { type: "string", description: "Kind of the object." },
      metadata: { type: "object" },
      spec: structuralSchema(def.spec),
      status: structuralSchema(def.status),
    },
    ...(def.rules ? { "x-kubernetes-validations": def.rules as unknown as OpenApiSchema[] } : {}),
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: "Namespaced",
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: ["tessera"],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {}, ...(def.scale ? { scale: def.scale } : {}) },
          additionalPrinterColumns: def.columns,
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}
