// The in-process Kubernetes API: the verbs of the REST API as typed method calls. The HTTP
// server is a translation of requests onto this class; the garbage collector, namespace
// controller, kubelet and built-in controllers call it directly. It is built in layers, one file
// each: reads (cluster-api-reads.ts), writes (cluster-api-writes.ts), deletion (cluster-api-delete.ts).
import { groupResourceOf, type ResourceType } from "../resources/resource-type.ts";
import { ClusterDeletes } from "./cluster-api-delete.ts";

export class ClusterApi extends ClusterDeletes {
  /** The resource type objects of a stored group-resource are kept as. */
  storageType(groupResource: string): ResourceType | undefined {
    return this.registry
      .all()
      .find((t) => groupResourceOf(t) === groupResource && t.version === t.storageVersion);
  }
}
