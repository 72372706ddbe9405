import assert from "node:assert/strict";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { redisPassword } from "./shared-response-cache.ts";

describe("redisPassword", () => {
  it("reads the variable cache.redis.passwordEnv names; none named, none read", () => {
    assert.equal(redisPassword("KV_PASSWORD", { KV_PASSWORD: "s3cret" }), "s3cret");
    assert.equal(redisPassword(undefined, { KV_PASSWORD: "s3cret" }), undefined);
  });

  it("refuses to start when the named variable is not set, naming the field and the variable", () => {
    assert.throws(
      () => redisPassword("KV_PASSWORD", {}),
      (err: unknown) =>
        err instanceof TesseraError &&
        err.code === Code.INVALID_ARGUMENT &&
        /cache\.redis\.passwordEnv: the environment variable KV_PASSWORD is not set/.test(err.message),
    );
  });
});
