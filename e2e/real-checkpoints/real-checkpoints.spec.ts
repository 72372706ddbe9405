// Checkpoints as users bring them: tiny random models carrying the real tokenizers of Llama 2 (with
// Llama-2-chat's template), Llama 3 (with Llama 3.1's rope scaling) and Qwen 3, in folders named like the
// models users download, served by a real `tessera serve` (one process per family) and a real
// `tessera router` in front of it. Every answer must equal what transformers 5.18 computed on the same
// checkpoint (devtools/reference/expected/checkpoints.json): the prompt ids, the greedy ids and their text
// for texts in many scripts, and, through the official `openai` Python client, the chat prompt's token
// count and reply (template from chat_template.jinja), a completion, and a tokenization over Python
// grpcio. Those clients run in $PYTHON (default python3); without them that test fails, saying what to
// install. Beside Llama 2, the same checkpoint made without a template (as the base Llama-2-7b-hf) is
// served too, behind the same router: a chat for it is refused with a 400 naming the chat template.
import assert from "node:assert/strict";
import path from "node:path";
import OpenAI from "openai";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";
import { requirePythonModules, runPythonJson } from "../python-client.ts";
import { type RunningRouter, startRouter } from "../router/fleet.ts";
import { generate, idsOf, textOf } from "../router/grpc-stream.ts";
import { makeCheckpoint, type ReferenceFamily, reference, withoutChatTemplate } from "./families.ts";

const CLIENTS = path.join(import.meta.dirname, "python-clients.py");

interface PythonAnswers {
  chats: { prompt_tokens: number; completion_tokens: number; text: string; finish_reason: string }[];
  streamed_first_chat: string;
  completion: { prompt_tokens: number; text: string; finish_reason: string };
  tokenize_ids: number[];
}

const runPythonClients = (request: Record<string, unknown>) => runPythonJson<PythonAnswers>(CLIENTS, request);

interface Worker {
  modelDir: string;
  served: Served;
}

async function startWorker(family: ReferenceFamily): Promise<Worker> {
  const modelDir = await makeCheckpoint(family);
  const served = await startServe(modelDir, ["--metrics-port", "0"]);
  await waitUntilServing(served.address, 60_000);
  return { modelDir, served };
}

/**
 * One family's checkpoint behind `tessera router`; with `plain` (the same checkpoint made without its
 * --chat-template), a second worker serves that one beside it, behind the same router.
 */
function describeFamily(family: ReferenceFamily, plain?: ReferenceFamily): void {
  describe(`${family.folder}: ${family.family}'s tokenizer (e2e)`, () => {
    const families = plain ? [family, plain] : [family];
    let workers: Worker[] = [];
    let client: GrpcClient;
    let router: RunningRouter;

    before(async () => {
      const started = await Promise.allSettled(families.map(startWorker));
      workers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const failed = started.find((s) => s.status === "rejected");
      if (failed) throw failed.reason;
      client = new GrpcClient(workers[0]!.served.address);
      const models = families.map((f, i) => ({ id: f.folder, tokenizer: workers[i]!.modelDir }));
      router = await startRouter(
        workers.map((w) => w.served),
        { models },
      );
    });

    after(async () => {
      client?.close();
      await router?.stop();
      for (const w of workers) w.served.child.kill("SIGTERM");
      await Promise.all(workers.map((w) => w.served.exited));
    });

    it("serves the model under its folder's name with the tokenizer's vocab", async () => {
      const { models } = await client.unary(Inference.method.listModels, {});
      assert.deepEqual(
        models.map((m) => [m.id, m.vocabSize]),
        [[family.folder, family.vocab_size]],
      );
    });

    it("tokenizes every text to transformers' prompt ids", async () => {
      const got: number[][] = [];
      for (const t of family.texts) {
        const r = await client.unary(Inference.method.tokenize, { text: t.text, addSpecialTokens: true });
        got.push(r.tokenIds);
      }
      assert.deepEqual(
        got,
        family.texts.map((t) => t.prompt_ids),
      );
    });

    it("generates transformers' greedy ids and text for every text, the streamed text equal to the final one", async () => {
      type Outcome = { text: string; ids: number[]; streamed: string; error: string | undefined };
      const got: Outcome[] = [];
      const want: Outcome[] = [];
      for (const t of family.texts) {
        const streamed = await generate(client, {
          prompt: { case: "text", value: t.text },
          sampling: { maxTokens: reference.max_new_tokens, temperature: 0 },
        });
        const error = streamed.error?.details;
        got.push({ text: t.text, ids: idsOf(streamed), streamed: textOf(streamed), error });
        want.push({ text: t.text, ids: t.greedy.ids, streamed: t.greedy.text, error: undefined });
      }
      assert.deepEqual(got, want);
    });

    it("answers the official openai Python client through `tessera router` as transformers, and Python grpcio", async () => {
      requirePythonModules("openai", "grpc");
      const first = family.texts[0]!;
      const second = family.texts[1]!;
      const answers = await runPythonClients({
        base_url: `${router.httpUrl}/v1`,
        grpc_address: router.grpcAddress,
        model: family.folder,
        max_tokens: reference.max_new_tokens,
        chats: family.chats.map((c) => c.messages),
        completion_prompt: first.text,
        tokenize_text: second.text,
      });
      assert.ok(family.chats.length > 0, `the reference has conversations for ${family.folder}`);
      assert.deepEqual(
        answers.chats.map((c) => ({ prompt_tokens: c.prompt_tokens, text: c.text })),
        family.chats.map((c) => ({ prompt_tokens: c.prompt_tokens, text: c.greedy.text })),
      );
      assert.equal(answers.streamed_first_chat, family.chats[0]!.greedy.text);
      assert.deepEqual(answers.completion, {
        prompt_tokens: first.prompt_ids.length,
        text: first.greedy.text,
        finish_reason: first.greedy.ids.length < reference.max_new_tokens ? "stop" : "length",
      });
      assert.deepEqual(answers.tokenize_ids, second.prompt_ids);
    });

    if (plain) {
      it(`refuses a chat for ${plain.folder}, the same checkpoint without a chat template, with a 400 naming it (official openai client)`, async () => {
        const openai = new OpenAI({ baseURL: `${router.httpUrl}/v1`, apiKey: "none", maxRetries: 0 });
        const messages = [{ role: "user" as const, content: "Hello?" }];
        const refused = await openai.chat.completions
          .create({ model: plain.folder, messages, max_tokens: 4 })
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        assert.ok(refused instanceof OpenAI.APIError, String(refused));
        assert.equal(refused.status, 400);
        assert.match(refused.message, new RegExp(`model "${plain.folder}" has no chat template`));
      });
    }
  });
}

describe("real checkpoints: tokenizers users bring, served end to end (e2e)", () => {
  for (const family of reference.families) {
    // Llama-2-chat beside the base model: the same checkpoint, no chat template anywhere.
    const plain = family.family === "llama2" ? withoutChatTemplate(family, "Llama-2-7b-hf") : undefined;
    describeFamily(family, plain);
  }
});
