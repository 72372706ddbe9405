// The container image as a user gets it: scripts/build-image.sh builds ./Dockerfile (on this
// machine's CI without a Docker engine or registry: buildah, on a Debian base made from Debian
// packages and node_modules' Node 24), then podman runs it as a restricted pod would: no network,
// read-only root, every capability dropped, uid 65532. `tessera --help` and a `tessera serve`
// Generate run in it, and the Generate matches `tessera generate` on the host.
// runc, with rlimits no higher than this machine's: crun refuses the host's hybrid cgroups, and
// neither runtime may raise RLIMIT_NOFILE/NPROC here (no CAP_SYS_RESOURCE).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { runTessera } from "../../services/cli/child-process.ts";
import { tinyCheckpoint } from "../checkpoint.ts";

const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");
const PROMPT = "Once upon a time";
const MAX_TOKENS = 12;

async function sh(file: string, args: string[], timeout = 60_000) {
  const { stdout } = await exec(file, args, { cwd: ROOT, timeout, maxBuffer: 64 << 20 });
  return stdout;
}

async function hostLimit(flag: string): Promise<number> {
  const value = (await sh("bash", ["-c", `ulimit ${flag}`])).trim();
  return value === "unlimited" ? 1 << 20 : Number(value);
}

describe("the container image (e2e/image)", function () {
  this.timeout(20 * 60_000);
  let image: string;
  let run: string[];
  const inImage = (args: string[], entrypoint?: string) =>
    sh("podman", [...run, ...(entrypoint ? ["--entrypoint", entrypoint] : []), image, ...args]);

  before(async () => {
    await sh("bash", ["scripts/build-image.sh"], 15 * 60_000);
    image = (await sh("bash", ["scripts/build-image.sh", "--print-image"])).trim();
    const nofile = await hostLimit("-Hn");
    const nproc = Math.min(await hostLimit("-Hu"), 4096);
    run = [
      "run",
      "--rm",
      "--runtime=runc",
      "--network=none",
      "--read-only",
      "--cap-drop=ALL",
      "--security-opt=no-new-privileges",
      `--ulimit=nofile=${nofile}:${nofile}`,
      `--ulimit=nproc=${nproc}:${nproc}`,
    ];
  });

  it("is tagged with the chart's image and appVersion, and configured to run the CLI as uid 65532", async () => {
    const chart = readFileSync(path.join(ROOT, "charts/tessera/Chart.yaml"), "utf8");
    const appVersion = /^appVersion: "?([^"\n]+)"?$/m.exec(chart)?.[1];
    assert.equal(image, `ghcr.io/tessera-dev/tessera:${appVersion}`);
    const [inspected] = JSON.parse(await sh("podman", ["image", "inspect", image])) as {
      Config: { User: string; Entrypoint: string[]; Cmd: string[]; WorkingDir: string; Env: string[] };
    }[];
    const config = inspected!.Config;
    assert.equal(config.User, "65532:65532");
    assert.deepEqual(config.Entrypoint, ["tessera"]);
    assert.deepEqual(config.Cmd, ["--help"]);
    assert.equal(config.WorkingDir, "/app");
    assert.ok(config.Env.includes("NODE_ENV=production"), config.Env.join(" "));
    assert.ok(config.Env.includes("TMPDIR=/tmp"), config.Env.join(" "));
  });

  it("holds production dependencies only, onnxruntime-node's CPU build for this platform, and no specs", async () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    // The lockfile marks what only devDependencies need ("dev": true); production ones may share some.
    const lock = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([where, entry]) => entry.dev && /^node_modules\/(@[^/]+\/)?[^/]+$/.test(where))
      .map(([where]) => where.slice("node_modules/".length));
    const listing = await inImage(
      [
        "-c",
        "ls -d node_modules/* node_modules/@*/*; ls -d node_modules/onnxruntime-node/bin/napi-v*/*/*; " +
          "find /app -name '*.spec.ts' -o -name testdata -o -name testing; node --version; id -u",
      ],
      "/bin/sh",
    );
    const lines = listing.trim().split("\n");
    const installed = new Set(lines.filter((l) => l.startsWith("node_modules/")).map((l) => l.slice(13)));
    for (const name of Object.keys(pkg.dependencies)) assert.ok(installed.has(name), `${name} missing`);
    assert.ok(devOnly.includes("typescript") && devOnly.includes("mocha"));
    assert.deepEqual(
      devOnly.filter((name) => installed.has(name)),
      [],
      "packages only devDependencies need",
    );
    const ort = lines.filter((l) => l.includes("onnxruntime-node/bin/"));
    assert.deepEqual(ort, [`node_modules/onnxruntime-node/bin/napi-v6/linux/${process.arch}`]);
    assert.ok(!lines.some((l) => l.startsWith("/app/")), `test files in the image: ${lines.join(" ")}`);
    assert.match(lines.at(-2)!, /^v24\./);
    assert.equal(lines.at(-1), "65532");
  });

  it("runs `tessera --help` with a read-only root, no network and no capabilities", async () => {
    const help = await inImage(["--help"]);
    for (const command of ["serve", "router", "operator"])
      assert.match(help, new RegExp(`^  ${command} `, "m"));
    assert.match(await inImage(["serve", "--help"]), /--model/);
  });

  it("serves a tiny checkpoint with `tessera serve`; a Generate gives what `tessera generate` gives on the host", async () => {
    const model = await tinyCheckpoint();
    const name = `tessera-image-e2e-${process.pid}`;
    await sh("podman", [
      ...run.filter((flag) => flag !== "--rm"),
      "--detach",
      `--name=${name}`,
      `--volume=${model}:/models/tiny-llama:ro`,
      `--volume=${path.join(ROOT, "e2e/image")}:/app/e2e/image:ro`,
      "--tmpfs=/scratch",
      "--env=TMPDIR=/scratch",
      image,
      ...["serve", "--model", "/models/tiny-llama", "--host", "127.0.0.1", "--port", "50051"],
    ]);
    try {
      const probe = await sh("podman", [
        "exec",
        name,
        ...["node", "e2e/image/generate-probe.ts", "127.0.0.1:50051", PROMPT, String(MAX_TOKENS)],
      ]);
      const served = JSON.parse(probe) as { ids: number[]; text: string; finishReason: string };
      const host = await runTessera([
        "generate",
        "--model",
        model,
        "--prompt",
        PROMPT,
        "--max-tokens",
        String(MAX_TOKENS),
        "--ignore-eos",
        "--json",
      ]);
      assert.equal(host.code, 0, host.stderr);
      const local = JSON.parse(host.stdout) as { output_ids: number[]; text: string };
      assert.equal(served.finishReason, "LENGTH");
      assert.equal(served.ids.length, MAX_TOKENS);
      assert.deepEqual(served.ids, local.output_ids);
      assert.equal(served.text, local.text);
    } finally {
      const logs = await sh("podman", ["logs", name]).catch(() => "");
      await sh("podman", ["rm", "--force", name]).catch(() => undefined);
      if (process.env["TESSERA_IMAGE_E2E_LOGS"]) process.stderr.write(logs);
    }
  });
});
