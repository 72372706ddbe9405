import assert from "node:assert/strict";
import { create, toBinary } from "@bufbuild/protobuf";
import { ConfigMapSchema } from "../../../../proto/gen/k8s/core_pb.js";
import { DeleteOptionsSchema, ObjectMetaSchema, TimeSchema } from "../../../../proto/gen/k8s/meta_pb.js";
import { UnknownSchema } from "../../../../proto/gen/k8s/runtime_pb.js";
import { statusCodeOf } from "../core/api-status.ts";
import { decodeProtobuf } from "./protobuf-codec.ts";

const envelope = (kind: string, raw: Uint8Array) =>
  Buffer.concat([
    Buffer.from("k8s\0", "latin1"),
    toBinary(UnknownSchema, create(UnknownSchema, { typeMeta: { apiVersion: "v1", kind }, raw })),
  ]);

describe("protobuf-codec", () => {
  it("decodes DeleteOptions, keeping an explicit zero grace period", () => {
    const options = create(DeleteOptionsSchema, {
      propagationPolicy: "Foreground",
      gracePeriodSeconds: 0n,
      preconditions: { uid: "u" },
    });
    assert.deepEqual(decodeProtobuf(envelope("DeleteOptions", toBinary(DeleteOptionsSchema, options))), {
      apiVersion: "v1",
      kind: "DeleteOptions",
      gracePeriodSeconds: 0,
      propagationPolicy: "Foreground",
      preconditions: { uid: "u" },
    });
  });

  it("decodes ConfigMaps with metadata timestamps and binary data", () => {
    const meta = create(ObjectMetaSchema, {
      name: "c",
      creationTimestamp: create(TimeSchema, { seconds: 1735689600n }),
    });
    const cm = create(ConfigMapSchema, {
      metadata: meta,
      data: { a: "b" },
      binaryData: { bin: new Uint8Array([1, 2]) },
    });
    assert.deepEqual(decodeProtobuf(envelope("ConfigMap", toBinary(ConfigMapSchema, cm))), {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", creationTimestamp: "2025-01-01T00:00:00Z" },
      data: { a: "b" },
      binaryData: { bin: "AQI=" },
    });
  });

  it("refuses bodies without the magic or of unknown kinds", () => {
    assert.throws(
      () => decodeProtobuf(Buffer.from("nope")),
      (err) => statusCodeOf(err) === 400,
    );
    assert.throws(
      () => decodeProtobuf(envelope("Pod", new Uint8Array())),
      (err) => statusCodeOf(err) === 415,
    );
  });
});
