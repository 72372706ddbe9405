// Property-based fuzzing of the router's OpenAI-compatible HTTP door, a real `tessera router` in front
// of real workers serving the tiny model: random bodies for /v1/completions and /v1/chat/completions
// (every known field of a random type or value, unknown fields, required ones left out), bodies that
// are not JSON, not UTF-8, empty, under a wrong content type or over the size limit. Never a 5xx and
// never a crash: a refusal is a 4xx whose message names the field; a valid body is served (200); a
// good request sent alongside the fuzz traffic, and one after each property, still completes.
// Fixed seed (fuzz-params.ts: TESSERA_FUZZ_SEED, TESSERA_FUZZ_RUNS to explore); the examples are the
// defects fuzzing found, kept as regressions.
import assert from "node:assert/strict";
import fc from "fast-check";
import type { Served } from "../../services/cli/child-process.ts";
import { type RunningRouter, sharedWorkers, startRouter } from "../router/fleet.ts";
import { assertProperty, fuzzParams } from "./fuzz-params.ts";
import { assertCompleted, assertRefusal, keepServing, post } from "./http-fuzz.ts";
import { RawJson, toJsonText } from "./json-arbitraries.ts";
import { type Body, fuzzChat, fuzzCompletion, validChat, validCompletion } from "./openai-bodies.ts";

describe("fuzzing the router's OpenAI HTTP door (e2e)", function () {
  this.timeout(120_000);
  let workers: Served[];
  let router: RunningRouter;
  let serving: ReturnType<typeof keepServing>;

  before(async () => {
    workers = await sharedWorkers();
    router = await startRouter(workers);
  });
  beforeEach(() => {
    serving = keepServing(router.httpUrl);
  });
  afterEach(async () => {
    // The good traffic beside the fuzz cases was served, and a request after them still is.
    assert.ok((await serving.stop()) > 0);
    const after = await post(
      `${router.httpUrl}/v1/chat/completions`,
      JSON.stringify({ messages: [{ role: "user", content: "Hi" }], max_tokens: 3 }),
    );
    assertCompleted(after, "chat");
    assert.equal(router.child.exitCode, null);
    for (const w of workers) assert.equal(w.child.exitCode, null);
  });
  after(async () => {
    await router?.stop();
  });

  // Defects fuzzing found, kept as regressions: the core named the prompt as gRPC spells it (`text`,
  // `token_ids[0]`), and a chat too long for the context as `prompt`; a top_k or repetition_penalty
  // too large for the proto's int32 / float failed the worker call, and the relay stream it shared
  // with the good requests (503 for them too).
  const regressions: Record<string, [Body][]> = {
    completion: [
      [{ prompt: "a", repetition_penalty: 1e308 }],
      [{ prompt: "a", top_k: 2 ** 40 }],
      [{ prompt: "" }],
      [{ prompt: [600] }],
      [{ prompt: [[1, 2, 9999]] }],
      [{ prompt: "a ".repeat(600) }],
    ],
    chat: [[{ messages: [{ role: "user", content: "a ".repeat(600) }] }]],
  };

  const routes = [
    {
      kind: "completion",
      path: "/v1/completions",
      required: "prompt",
      valid: validCompletion,
      fuzz: fuzzCompletion,
    },
    { kind: "chat", path: "/v1/chat/completions", required: "messages", valid: validChat, fuzz: fuzzChat },
  ] as const;

  for (const { kind, path, required, valid, fuzz } of routes) {
    it(`serves every valid ${path} body (200)`, async () => {
      await assertProperty(
        fc.asyncProperty(valid, async (body: Body) => {
          assertCompleted(await post(`${router.httpUrl}${path}`, toJsonText(body)), kind);
        }),
        fuzzParams(30),
      );
    });

    it(`refuses random ${path} bodies with a 4xx naming the field, never a 5xx`, async () => {
      await assertProperty(
        fc.asyncProperty(fuzz, async (body: Body) => {
          const answer = await post(`${router.httpUrl}${path}`, toJsonText(body));
          if (answer.status === 200) assertCompleted(answer, kind);
          else assertRefusal(answer, body, required);
        }),
        fuzzParams(150, regressions[kind]),
      );
    });
  }

  it("answers random and valid bodies sent at once, each on its own (one never fails another)", async () => {
    const oneCase = fc.oneof(
      ...routes.flatMap((route) => [
        fc.record({ route: fc.constant(route), body: route.fuzz, valid: fc.constant(false) }),
        fc.record({ route: fc.constant(route), body: route.valid, valid: fc.constant(true) }),
      ]),
    );
    await assertProperty(
      fc.asyncProperty(fc.array(oneCase, { minLength: 2, maxLength: 6 }), async (cases) => {
        const answers = await Promise.all(
          cases.map(({ route, body }) => post(`${router.httpUrl}${route.path}`, toJsonText(body))),
        );
        for (const [i, { route, body, valid }] of cases.entries()) {
          const answer = answers[i]!;
          if (valid || answer.status === 200) assertCompleted(answer, route.kind);
          else assertRefusal(answer, body, route.required);
        }
      }),
      fuzzParams(25),
    );
  });

  it("refuses bodies that are not a JSON object (400 naming the body), whatever the content type", async () => {
    const notAnObject = fc.oneof(
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.constantFrom(
        "",
        " ",
        "{",
        '{"prompt":',
        "[]",
        "null",
        "1",
        '"x"',
        "{}}",
        '{"prompt":"a",}',
        "\u0000",
      ),
      fc
        .jsonValue({ maxDepth: 2 })
        .map((v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? [] : v))
        .map(toJsonText),
      fc.uint8Array({ maxLength: 200 }),
    );
    const contentType = fc.constantFrom(
      "application/json",
      "text/plain",
      "application/x-www-form-urlencoded",
      "",
      "application/json; charset=latin1",
    );
    await assertProperty(
      fc.asyncProperty(fc.constantFrom(...routes), notAnObject, contentType, async (route, body, type) => {
        const answer = await post(`${router.httpUrl}${route.path}`, body, type);
        assertRefusal(answer, undefined, route.required);
      }),
      fuzzParams(100),
    );
  });

  it("answers 413 to a body over the size limit, declared or not", async () => {
    const limit = 4 * 1024 * 1024;
    const big = toJsonText({ prompt: new RawJson(JSON.stringify("x".repeat(limit))) });
    assertRefusal(await post(`${router.httpUrl}/v1/completions`, big), undefined, "prompt");
    const res = await fetch(`${router.httpUrl}/v1/completions`, {
      method: "POST",
      body: new Blob([big]).stream(),
      duplex: "half",
    } as RequestInit);
    assert.equal(res.status, 413);
  });
});
