import assert from "node:assert/strict";
import { flagOfField } from "../../kernel/flag-table.ts";
import { parseServeConfig, servedNameOf } from "./serve-config.ts";
import { serveConfigFromFlags } from "./serve-flag-config.ts";
import { layerRange, SERVE_FLAGS, servedModelName } from "./serve-flags.ts";

describe("serve config from flags and environment", () => {
  const model = { model: "/m" };

  it("fills the defaults: the whole model, no KV tier, the engine's settings", () => {
    const { value } = serveConfigFromFlags(model, {});
    assert.equal(value?.modelDir, "/m");
    assert.deepEqual([value?.host, value?.port, value?.drainTimeoutMs], ["127.0.0.1", 50051, 30_000]);
    assert.deepEqual(Object.keys(value!).sort(), ["drainTimeoutMs", "engine", "host", "modelDir", "port"]);
    assert.equal(value?.engine?.enablePrefixCaching, true);
    assert.equal(value?.engine?.blockSize, 16);
  });

  it("puts each flag at its config field", () => {
    const { value } = serveConfigFromFlags(
      { ...model, port: 0, threads: 2, blockSize: 32, maxRunningRequests: 8, prefixCaching: false },
      {},
    );
    assert.deepEqual([value?.port, value?.threads], [0, 2]);
    assert.deepEqual(
      [value?.engine?.blockSize, value?.engine?.maxNumSeqs, value?.engine?.enablePrefixCaching],
      [32, 8, false],
    );
  });

  it("takes TLS from --tls-dir or TESSERA_TLS_DIR (unset: plaintext) and refuses a server name without a folder", () => {
    assert.equal(serveConfigFromFlags(model, {}).value?.tls, undefined);
    assert.deepEqual(serveConfigFromFlags({ ...model, tlsDir: "/tls" }, {}).value?.tls, { dir: "/tls" });
    const env = serveConfigFromFlags(model, {
      TESSERA_TLS_DIR: "/etc/tls",
      TESSERA_TLS_SERVER_NAME: "w.ns.svc",
    });
    assert.deepEqual(env.value?.tls, { dir: "/etc/tls", serverName: "w.ns.svc" });
    const alone = serveConfigFromFlags({ ...model, tlsServerName: "w.ns.svc" }, {});
    assert.match(alone.error?.message ?? "", /tls\.dir/);
    assert.equal(flagOfField(SERVE_FLAGS)["tls.dir"], "--tls-dir");
  });

  it("takes --generation-config or TESSERA_GENERATION_CONFIG (unset: auto) and refuses other modes", () => {
    assert.equal(serveConfigFromFlags(model, {}).value?.generationConfig, undefined);
    assert.equal(
      serveConfigFromFlags({ ...model, generationConfig: "none" }, {}).value?.generationConfig,
      "none",
    );
    const env = serveConfigFromFlags(model, { TESSERA_GENERATION_CONFIG: "none" });
    assert.equal(env.value?.generationConfig, "none");
    const bad = serveConfigFromFlags(model, { TESSERA_GENERATION_CONFIG: "vllm" });
    assert.match(bad.error?.message ?? "", /TESSERA_GENERATION_CONFIG.*auto, none/);
  });

  describe("--speculative-config", () => {
    it("takes vLLM's JSON from the flag or TESSERA_SPECULATIVE_CONFIG (the operator's)", () => {
      const json = '{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}';
      assert.equal(
        serveConfigFromFlags({ ...model, speculativeConfig: json }, {}).value?.speculative?.method,
        "ngram",
      );
      const env = { TESSERA_SPECULATIVE_CONFIG: '{"model":"/d","num_speculative_tokens":2}' };
      assert.equal(serveConfigFromFlags(model, env).value?.speculative?.method, "draft_model");
      assert.equal(serveConfigFromFlags(model, {}).value?.speculative, undefined);
    });

    it("refuses a bad config at start-up, naming the flag and the field", () => {
      const { error } = serveConfigFromFlags({ ...model, speculativeConfig: '{"method":"ngram"}' }, {});
      assert.match(error?.message ?? "", /--speculative-config.*speculative_config\.num_speculative_tokens/);
    });
  });

  describe("--quantization", () => {
    it("is off unless --quantization or TESSERA_QUANTIZATION (the operator's) says int8 or int4; blocks of 128, symmetric", () => {
      assert.equal(serveConfigFromFlags(model, {}).value?.quantization, undefined);
      assert.equal(
        serveConfigFromFlags({ ...model, quantization: "none" }, {}).value?.quantization,
        undefined,
      );
      assert.deepEqual(serveConfigFromFlags({ ...model, quantization: "int4" }, {}).value?.quantization, {
        bits: 4,
        blockSize: 128,
        symmetric: true,
      });
      const env = serveConfigFromFlags(model, { TESSERA_QUANTIZATION: "int8" });
      assert.deepEqual(env.value?.quantization, { bits: 8, blockSize: "channel", symmetric: true });
      const flagWins = serveConfigFromFlags(
        { ...model, quantization: "none" },
        { TESSERA_QUANTIZATION: "int8" },
      );
      assert.equal(flagWins.value?.quantization, undefined);
    });

    it("takes a block size and the asymmetric scheme from flags or variables", () => {
      const flags = serveConfigFromFlags(
        { ...model, quantization: "int4", quantizationBlockSize: 128, quantizationScheme: "asymmetric" },
        {},
      );
      assert.deepEqual(flags.value?.quantization, { bits: 4, blockSize: 128, symmetric: false });
      const env = serveConfigFromFlags(model, {
        TESSERA_QUANTIZATION: "int4",
        TESSERA_QUANTIZATION_BLOCK_SIZE: "16",
        TESSERA_QUANTIZATION_SCHEME: "asymmetric",
      });
      assert.deepEqual(env.value?.quantization, { bits: 4, blockSize: 16, symmetric: false });
    });

    it("quantizes int8 per channel unless told a block size, and refuses channel at int4", () => {
      const byDefault = serveConfigFromFlags({ ...model, quantization: "int8" }, {});
      assert.deepEqual(byDefault.value?.quantization, { bits: 8, blockSize: "channel", symmetric: true });
      const blocks = serveConfigFromFlags(model, {
        TESSERA_QUANTIZATION: "int8",
        TESSERA_QUANTIZATION_BLOCK_SIZE: "64",
      });
      assert.deepEqual(blocks.value?.quantization, { bits: 8, blockSize: 64, symmetric: true });
      const int4 = serveConfigFromFlags(model, {
        TESSERA_QUANTIZATION: "int4",
        TESSERA_QUANTIZATION_BLOCK_SIZE: "channel",
      });
      assert.match(
        int4.error?.message ?? "",
        /TESSERA_QUANTIZATION_BLOCK_SIZE: channel applies to int8 only/,
      );
    });

    it("refuses a mode, block size or scheme it cannot apply, naming the flag or the variable", () => {
      const mode = serveConfigFromFlags(model, { TESSERA_QUANTIZATION: "int3" }).error?.message ?? "";
      assert.match(mode, /--quantization.*TESSERA_QUANTIZATION.*Allowed choices are none, int8, int4/);
      const odd = serveConfigFromFlags({ ...model, quantization: "int4", quantizationBlockSize: 24 }, {});
      assert.match(
        odd.error?.message ?? "",
        /--quantization-block-size: 24 must be a power of two, at least 16/,
      );
      const small = serveConfigFromFlags(model, {
        TESSERA_QUANTIZATION: "int8",
        TESSERA_QUANTIZATION_BLOCK_SIZE: "8",
      });
      assert.match(small.error?.message ?? "", /TESSERA_QUANTIZATION_BLOCK_SIZE: 8 must be a power of two/);
      const zero = serveConfigFromFlags(model, {
        TESSERA_QUANTIZATION: "int8",
        TESSERA_QUANTIZATION_BLOCK_SIZE: "0",
      });
      assert.match(zero.error?.message ?? "", /TESSERA_QUANTIZATION_BLOCK_SIZE.*must be > 0/);
      const scheme = serveConfigFromFlags(model, {
        TESSERA_QUANTIZATION: "int4",
        TESSERA_QUANTIZATION_SCHEME: "nf4",
      });
      assert.match(scheme.error?.message ?? "", /TESSERA_QUANTIZATION_SCHEME.*symmetric, asymmetric/);
    });

    it("refuses a block size or scheme without a quantization to apply it to", () => {
      const stray = serveConfigFromFlags({ ...model, quantizationBlockSize: 64 }, {});
      assert.match(
        stray.error?.message ?? "",
        /--quantization-block-size: applies only to a quantized model/,
      );
      const scheme = serveConfigFromFlags(model, { TESSERA_QUANTIZATION_SCHEME: "asymmetric" });
      assert.match(
        scheme.error?.message ?? "",
        /TESSERA_QUANTIZATION_SCHEME: applies only to a quantized model/,
      );
    });
  });

  describe("the served model name", () => {
    it("is the folder's name unless --served-model-name or TESSERA_MODEL_NAME (the operator's) says otherwise", () => {
      const qwen = { model: "/models/Qwen2.5-0.5B-Instruct/" };
      const folder = serveConfigFromFlags(qwen, {}).value!;
      assert.equal(folder.servedName, undefined);
      assert.equal(servedNameOf(folder), "Qwen2.5-0.5B-Instruct");
      const env = serveConfigFromFlags(qwen, { TESSERA_MODEL_NAME: "q2" }).value!;
      assert.equal(servedNameOf(env), "q2");
      const flag = serveConfigFromFlags(
        { ...qwen, servedModelName: "Qwen/Qwen2.5-0.5B" },
        { TESSERA_MODEL_NAME: "q2" },
      );
      assert.equal(servedNameOf(flag.value!), "Qwen/Qwen2.5-0.5B");
      assert.equal(
        servedNameOf(serveConfigFromFlags(qwen, { TESSERA_MODEL_NAME: " " }).value!),
        "Qwen2.5-0.5B-Instruct",
      );
    });

    it("refuses an empty or invalid name, naming the flag or the variable", () => {
      assert.deepEqual(servedModelName(""), { error: "must not be empty" });
      assert.match(servedModelName("my model").error ?? "", /"my model" is not a model name/);
      assert.equal(flagOfField(SERVE_FLAGS)["servedName"], "--served-model-name");
      const env = serveConfigFromFlags(model, { TESSERA_MODEL_NAME: "q2@v1" }).error;
      assert.match(
        env!.message,
        /^option '--served-model-name <name>' value 'q2@v1' from env 'TESSERA_MODEL_NAME' is invalid\. "q2@v1" is not a model name/,
      );
      // A program building the config itself gets the same rule, naming the field.
      assert.match(
        parseServeConfig({ modelDir: "/m", servedName: "" }).error!.message,
        /^servedName: must not be empty/,
      );
    });
  });

  describe("architecture and dtype", () => {
    it("reads TESSERA_ARCHITECTURE and TESSERA_DTYPE where no flag is given", () => {
      const env = { TESSERA_ARCHITECTURE: "llama", TESSERA_DTYPE: "bfloat16" };
      const fromEnv = serveConfigFromFlags(model, env).value;
      assert.deepEqual([fromEnv?.architecture, fromEnv?.dtype], ["LlamaForCausalLM", "bfloat16"]);
      const flags = { ...model, architecture: "Qwen2ForCausalLM", dtype: "float32" };
      const fromFlags = serveConfigFromFlags(flags, env).value;
      assert.deepEqual([fromFlags?.architecture, fromFlags?.dtype], ["Qwen2ForCausalLM", "float32"]);
      const mixtral = serveConfigFromFlags(model, { TESSERA_ARCHITECTURE: "mixtral" }).value;
      assert.equal(mixtral?.architecture, "MixtralForCausalLM");
    });

    it("leaves auto, empty and absent to the checkpoint", () => {
      for (const [given, env] of [
        [{}, {}],
        [{}, { TESSERA_ARCHITECTURE: "auto", TESSERA_DTYPE: " " }],
        [{ dtype: "auto" }, { TESSERA_DTYPE: "float16" }],
      ] as const) {
        const { value } = serveConfigFromFlags({ ...model, ...given }, env);
        assert.deepEqual([value?.architecture, value?.dtype], [undefined, undefined]);
      }
    });

    it("names the variable or the flag a bad value came from", () => {
      const arch = serveConfigFromFlags(model, { TESSERA_ARCHITECTURE: "gpt2" }).error;
      assert.match(
        arch!.message,
        /^TESSERA_ARCHITECTURE: unsupported architecture "gpt2"; supported: auto, .*llama/,
      );
      assert.equal(
        serveConfigFromFlags(model, { TESSERA_DTYPE: "int8" }).error?.message,
        'TESSERA_DTYPE: unsupported dtype "int8"; supported: auto, float32, float16, bfloat16',
      );
      assert.match(
        serveConfigFromFlags({ ...model, dtype: "fp16" }, {}).error!.message,
        /^--dtype: unsupported dtype "fp16"/,
      );
    });
  });

  describe("the remote KV tier", () => {
    const kvEnv = {
      TESSERA_KV_URL: "redis://redis:6379/0",
      TESSERA_KV_PASSWORD: "secret",
      TESSERA_KV_KEY_PREFIX: "tessera:kv:ml:tiny:",
      TESSERA_KV_TTL_MS: "600000",
      TESSERA_KV_FAILURE_POLICY: "fail",
    };

    it("is there only with an address", () => {
      assert.equal(serveConfigFromFlags(model, { TESSERA_KV_KEY_PREFIX: "p:" }).value?.kv, undefined);
      assert.equal(serveConfigFromFlags({ ...model, kvRedis: "" }, {}).value?.kv, undefined);
    });

    it("reads the operator's environment; flags override it", () => {
      const kv = serveConfigFromFlags(model, kvEnv).value?.kv;
      assert.deepEqual(
        [kv?.redis.url, kv?.redis.password, kv?.redis.keyPrefix, kv?.redis.ttlMs, kv?.policy],
        ["redis://redis:6379/0", "secret", "tessera:kv:ml:tiny:", 600_000, "fail"],
      );
      assert.deepEqual([kv?.readThrough, kv?.writeThrough], [true, true]);
      const flags = { ...model, kvTtlMs: 1000, kvPolicy: "recompute", kvWriteThrough: false } as const;
      const flagged = serveConfigFromFlags(flags, kvEnv).value?.kv;
      assert.deepEqual(
        [flagged?.redis.ttlMs, flagged?.policy, flagged?.writeThrough],
        [1000, "recompute", false],
      );
    });

    it("takes the store's deadlines per worker (default 2 s per operation, 5 s per connection)", () => {
      const defaults = serveConfigFromFlags(model, kvEnv).value?.kv?.redis;
      assert.deepEqual([defaults?.opTimeoutMs, defaults?.connectTimeoutMs], [2_000, 5_000]);
      const env = { ...kvEnv, TESSERA_KV_TIMEOUT_MS: "300", TESSERA_KV_CONNECT_TIMEOUT_MS: "700" };
      const fromEnv = serveConfigFromFlags(model, env).value?.kv?.redis;
      assert.deepEqual([fromEnv?.opTimeoutMs, fromEnv?.connectTimeoutMs], [300, 700]);
      const flagged = serveConfigFromFlags({ ...model, kvTimeoutMs: 150 }, env).value?.kv?.redis;
      assert.equal(flagged?.opTimeoutMs, 150);
      assert.equal(
        serveConfigFromFlags(model, { ...kvEnv, TESSERA_KV_TIMEOUT_MS: "0" }).error?.message,
        "option '--kv-timeout-ms <ms>' value '0' from env 'TESSERA_KV_TIMEOUT_MS' is invalid. must be > 0",
      );
    });

    it("names a variable that does not read", () => {
      assert.equal(
        serveConfigFromFlags(model, { ...kvEnv, TESSERA_KV_TTL_MS: "10m" }).error?.message,
        "option '--kv-ttl-ms <ms>' value '10m' from env 'TESSERA_KV_TTL_MS' is invalid. must be an integer",
      );
      assert.equal(
        serveConfigFromFlags(model, { ...kvEnv, TESSERA_KV_FAILURE_POLICY: "retry" }).error?.message,
        "option '--kv-policy <policy>' value 'retry' from env 'TESSERA_KV_FAILURE_POLICY' is invalid. " +
          "Allowed choices are recompute, fail.",
      );
    });
  });

  describe("a shard of a parallel replica", () => {
    const operatorEnv = {
      TESSERA_STAGE: "1",
      TESSERA_NUM_STAGES: "2",
      TESSERA_TENSOR_RANK: "0",
      TESSERA_TENSOR_SIZE: "2",
      TESSERA_PEERS: "a:50051,b:50051,c:50051,d:50051",
      TESSERA_LAYER_START: "6",
      TESSERA_LAYER_END: "12",
    };

    it("reads the operator's environment, layers as [start, end)", () => {
      const { value, error } = serveConfigFromFlags(model, operatorEnv);
      assert.equal(error, undefined);
      assert.deepEqual(value?.shard, {
        stage: 1,
        stages: 2,
        tensorRank: 0,
        tensorSize: 2,
        layers: { start: 6, end: 12 },
        peers: ["a:50051", "b:50051", "c:50051", "d:50051"],
        formationTimeoutMs: 600_000,
        stepTimeoutMs: 30_000,
        microBatches: 1,
      });
    });

    it("takes the dev cluster's hosts file (its stand-in for cluster DNS) from TESSERA_HOSTS_FILE", () => {
      const hosts = { ...operatorEnv, TESSERA_HOSTS_FILE: "/var/dev/cluster-hosts" };
      assert.equal(serveConfigFromFlags(model, hosts).value?.shard?.hostsFile, "/var/dev/cluster-hosts");
      const blank = { ...operatorEnv, TESSERA_HOSTS_FILE: " " };
      assert.equal(serveConfigFromFlags(model, blank).value?.shard?.hostsFile, undefined);
    });

    it("lets flags override the environment; --layers is inclusive", () => {
      const layers = layerRange("0-5").value;
      const flags = { ...model, pipelineStage: 0, layers, microBatches: 2 };
      const shard = serveConfigFromFlags(flags, operatorEnv).value?.shard;
      assert.deepEqual([shard?.stage, shard?.layers, shard?.microBatches], [0, { start: 0, end: 6 }, 2]);
      assert.equal(layerRange("5-3").error, "must be first-last layer numbers, e.g. 0-11");
      assert.equal(layerRange("x").error, "must be first-last layer numbers, e.g. 0-11");
    });

    it("is no shard for a group of one, and names the field of a bad group", () => {
      const one = { TESSERA_NUM_STAGES: "1", TESSERA_TENSOR_SIZE: "1", TESSERA_PEERS: "a:1" };
      assert.equal(serveConfigFromFlags(model, one).value?.shard, undefined);
      const short = serveConfigFromFlags({ ...model, tensorSize: 2, peers: ["a:1"] }, {});
      assert.match(short.error!.message, /^shard\.peers: must list one address per worker/);
      const rank = serveConfigFromFlags(
        { ...model, tensorSize: 2, tensorRank: 2, peers: ["a:1", "b:1"] },
        {},
      );
      assert.match(rank.error!.message, /^shard\.tensorRank: /);
      const nan = serveConfigFromFlags(model, { ...operatorEnv, TESSERA_STAGE: "x" });
      assert.match(
        nan.error!.message,
        /^option '--pipeline-stage <n>' value 'x' from env 'TESSERA_STAGE' is invalid/,
      );
    });
  });

  it("knows the flag behind each config field it sets", () => {
    const flags = flagOfField(SERVE_FLAGS);
    assert.equal(flags["modelDir"], "--model");
    assert.equal(flags["engine.maxNumSeqs"], "--max-running-requests");
    assert.equal(flags["shard.formationTimeoutMs"], "--group-timeout-ms");
    assert.equal(flags["shard.peers"], "--peers");
    assert.equal(flags["kv.redis.password"], undefined);
  });
});
