import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import { deleteOptions, listOptions, writeOptions } from "./query-options.ts";

describe("query-options", () => {
  it("reads list and write parameters; the field manager defaults to the user agent's product", () => {
    assert.deepEqual(listOptions(new URLSearchParams("labelSelector=a%3Db&limit=5"), "ns"), {
      namespace: "ns",
      labelSelector: "a=b",
      limit: 5,
    });
    assert.deepEqual(
      writeOptions(new URLSearchParams("dryRun=All&fieldValidation=Strict"), "kubectl/v1.35.2 (linux/amd64)"),
      { fieldManager: "kubectl", fieldValidation: "Strict", dryRun: true },
    );
    assert.throws(
      () => writeOptions(new URLSearchParams("fieldValidation=Loose"), undefined),
      (err) => statusCodeOf(err) === 400,
    );
  });

  it("merges DeleteOptions from the body and the query; orphanDependents means Orphan", () => {
    assert.deepEqual(
      deleteOptions(new URLSearchParams("gracePeriodSeconds=0"), {
        propagationPolicy: "Foreground",
        preconditions: { uid: "u" },
      }),
      {
        propagationPolicy: "Foreground",
        gracePeriodSeconds: 0,
        preconditions: { uid: "u" },
      },
    );
    assert.deepEqual(deleteOptions(new URLSearchParams("orphanDependents=true"), undefined), {
      propagationPolicy: "Orphan",
    });
  });
});
