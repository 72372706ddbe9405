// `tessera batch`'s replicas: which one a request goes to, and how the cores are split between them.
import assert from "node:assert/strict";
import type { GenerateEvent, GenerateRequest } from "../../inference/types.ts";
import { EngineReplicas, type Replica } from "./engine-replicas.ts";
import { replicaPlan, replicasThatFit } from "./offline-engine.ts";

/** A replica that records the requests it is given and holds `load` requests already. */
function fakeReplica(name: string, load: number) {
  const given: string[] = [];
  let closed = false;
  const replica = {
    description: { id: name, architecture: "Fake", maxContext: 32, vocabSize: 8, dtype: "float32" },
    tokenizer: {},
    chatTemplate: undefined,
    attention: { backend: "shared-prefix", timingsMs: {} },
    engines: { numRunning: load, numWaiting: 0 },
    generate(request: GenerateRequest): AsyncIterable<GenerateEvent> {
      given.push(request.requestId);
      replica.engines.numWaiting++;
      return (async function* () {})();
    },
    close: async () => {
      closed = true;
    },
  };
  return { replica: replica as unknown as Replica, given, closed: () => closed };
}

function request(requestId: string): GenerateRequest {
  return { requestId, promptIds: [1], sampling: {} as GenerateRequest["sampling"] };
}

describe("EngineReplicas", () => {
  it("gives each request to the replica holding the fewest, the first on a tie", () => {
    const a = fakeReplica("a", 1);
    const b = fakeReplica("b", 0);
    const replicas = new EngineReplicas([a.replica, b.replica]);
    for (const id of ["r1", "r2", "r3", "r4"]) replicas.generate(request(id));
    assert.deepEqual(b.given, ["r1", "r3"]);
    assert.deepEqual(a.given, ["r2", "r4"]);
  });

  it("describes the model as its first replica and closes them all", async () => {
    const a = fakeReplica("a", 0);
    const b = fakeReplica("b", 0);
    const replicas = new EngineReplicas([a.replica, b.replica]);
    assert.equal(replicas.description.id, "a");
    assert.equal(replicas.attention.backend, "shared-prefix");
    await replicas.close();
    assert.ok(a.closed() && b.closed());
  });
});

describe("replicaPlan", () => {
  it("runs two replicas on every core, split evenly", () => {
    assert.deepEqual(replicaPlan(0, 2), { replicas: 2, threadsEach: 1 });
    assert.deepEqual(replicaPlan(0, 16), { replicas: 2, threadsEach: 8 });
  });

  it("keeps to the threads asked for: one thread is one replica", () => {
    assert.deepEqual(replicaPlan(1, 16), { replicas: 1, threadsEach: 1 });
    assert.deepEqual(replicaPlan(5, 16), { replicas: 2, threadsEach: 2 });
  });

  it("runs one replica on a single core", () => {
    assert.deepEqual(replicaPlan(0, 1), { replicas: 1, threadsEach: 1 });
  });
});

describe("replicasThatFit", () => {
  const GiB = 2 ** 30;

  it("loads a second copy when its weights and pool fit beside the first's pool", () => {
    assert.equal(
      replicasThatFit(1, { copyBytes: 0.4 * GiB, kvPoolBytes: 0.25 * GiB, availableBytes: 20 * GiB }),
      1,
    );
  });

  it("keeps one replica when a second copy of the weights would not fit", () => {
    // 14 GiB of weights with 4 GiB of pool each: the first's pool and a second copy need 22 GiB.
    assert.equal(
      replicasThatFit(1, { copyBytes: 14 * GiB, kvPoolBytes: 4 * GiB, availableBytes: 20 * GiB }),
      0,
    );
  });

  it("never asks for more than wanted, nor fewer than none", () => {
    assert.equal(replicasThatFit(1, { copyBytes: 1, kvPoolBytes: 1, availableBytes: 100 * GiB }), 1);
    assert.equal(replicasThatFit(1, { copyBytes: GiB, kvPoolBytes: GiB, availableBytes: GiB }), 0);
  });
});
