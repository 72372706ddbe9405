import assert from "node:assert/strict";
import {
  configOf,
  type FlagTable,
  type FlagValues,
  flagOfField,
  integer,
  nonNegativeInteger,
  positiveInteger,
  readFlags,
} from "./flag-table.ts";

const TABLE = {
  port: { flag: "--port <port>", description: "port", read: integer, default: 80, field: "port" },
  stage: {
    flag: "--stage <n>",
    description: "stage",
    read: nonNegativeInteger,
    env: "STAGE",
    field: "shard.stage",
  },
  policy: { flag: "--policy <p>", description: "policy", choices: ["retry", "fail"], env: "POLICY" },
  cache: { flag: "--no-cache", description: "no cache", field: "cache.on" },
  secret: { description: "from a Secret", env: "SECRET", field: "auth.secret" },
} as const satisfies FlagTable;

describe("flag table", () => {
  it("reads integers, naming the reason a text is not one", () => {
    assert.equal(integer("42").value, 42);
    assert.equal(integer(" -3 ").value, -3);
    assert.equal(integer("1.5").error, "must be an integer");
    assert.equal(integer("").error, "must be an integer");
    assert.equal(nonNegativeInteger("-1").error, "must be >= 0");
    assert.equal(positiveInteger("0").error, "must be > 0");
    assert.equal(positiveInteger("x").error, "must be an integer");
  });

  it("types each value: always set with a default, a requirement or as a switch", () => {
    const { values } = readFlags(TABLE, {}, {}).value!;
    const typed: {
      port: number;
      stage: number | undefined;
      policy: "retry" | "fail" | undefined;
      cache: boolean;
      secret: string | undefined;
    } = values satisfies FlagValues<typeof TABLE>;
    assert.deepEqual(typed, {
      port: 80,
      stage: undefined,
      policy: undefined,
      cache: true,
      secret: undefined,
    });
  });

  it("takes a given flag, else its variable, else its default; a blank variable is unset", () => {
    const env = { STAGE: "2", SECRET: "s", POLICY: " " };
    const { values, from } = readFlags(TABLE, { port: 8080, cache: false }, env).value!;
    assert.deepEqual(values, { port: 8080, stage: 2, policy: undefined, cache: false, secret: "s" });
    assert.deepEqual(
      [from("port"), from("stage"), from("secret"), from("policy")],
      ["--port", "STAGE", "SECRET", "--policy"],
    );
    assert.equal(readFlags(TABLE, { stage: 0 }, env).value?.values.stage, 0);
  });

  it("names a variable that does not read, and its flag, as commander does", () => {
    assert.equal(
      readFlags(TABLE, {}, { STAGE: "-1" }).error?.message,
      "option '--stage <n>' value '-1' from env 'STAGE' is invalid. must be >= 0",
    );
    assert.equal(
      readFlags(TABLE, {}, { POLICY: "maybe" }).error?.message,
      "option '--policy <p>' value 'maybe' from env 'POLICY' is invalid. Allowed choices are retry, fail.",
    );
    const variableOnly = { start: { description: "start", read: integer, env: "START" } } as const;
    assert.equal(readFlags(variableOnly, {}, { START: "x" }).error?.message, "START: must be an integer");
  });

  it("places each set value at its field and names the flag behind a field", () => {
    const { values } = readFlags(TABLE, {}, { STAGE: "1" }).value!;
    assert.deepEqual(configOf(TABLE, values), { port: 80, shard: { stage: 1 }, cache: { on: true } });
    assert.deepEqual(flagOfField(TABLE), {
      port: "--port",
      "shard.stage": "--stage",
      "cache.on": "--no-cache",
    });
  });
});
