import assert from "node:assert/strict";
import { Command, type CommanderError } from "commander";
import { type FlagTable, integer } from "../kernel/flag-table.ts";
import { SERVE_FLAGS } from "../worker/index.ts";
import { flagsGiven, mountFlags } from "./flag-options.ts";
import { serveCommand } from "./serve-command.ts";

const TABLE = {
  port: { flag: "--port <port>", description: "the port", read: integer, default: 80 },
  stage: { flag: "--stage <n>", description: "the stage", read: integer, env: "STAGE" },
  cache: { flag: "--no-cache", description: "no cache" },
  secret: { description: "from a Secret", env: "SECRET" },
} as const satisfies FlagTable;

/** Parses args with the table mounted; resolves with what the command line gave. */
async function parse(args: string[]): Promise<Record<string, unknown>> {
  let given: Record<string, unknown> = {};
  const command = mountFlags(new Command("t"), TABLE)
    .exitOverride()
    .configureOutput({ writeErr: () => {} })
    .action((_flags: unknown, self: Command) => {
      given = flagsGiven(self, TABLE);
    });
  await command.parseAsync(args, { from: "user" });
  return given;
}

describe("flag options", () => {
  it("mounts the flags, read by their readers, and gives back only those on the command line", async () => {
    assert.deepEqual(await parse([]), {});
    assert.deepEqual(await parse(["--port", "8080", "--no-cache"]), { port: 8080, cache: false });
  });

  it("reports a value its reader refuses as commander does, naming the flag", async () => {
    await assert.rejects(parse(["--port", "x"]), (err: CommanderError) => {
      assert.equal(err.message, "error: option '--port <port>' argument 'x' is invalid. must be an integer");
      return true;
    });
  });

  it("shows the default and the variable in --help, and no option for a variable only", () => {
    const help = mountFlags(new Command("t"), TABLE).helpInformation().replace(/\s+/g, " ");
    assert.match(help, /--port <port> the port \(default: 80\)/);
    assert.match(help, /--stage <n> the stage \(env: STAGE\)/);
    assert.doesNotMatch(help, /SECRET/);
  });

  it("refuses a table key that is not the flag's commander name", () => {
    const table = { cacheOff: { flag: "--no-cache", description: "no cache" } } satisfies FlagTable;
    assert.throws(() => mountFlags(new Command("t"), table), /must be keyed cache, not cacheOff/);
  });

  it("lists every flag of tessera serve in its help, with its description", () => {
    const help = serveCommand().helpInformation().replace(/\s+/g, " ");
    for (const entry of Object.values(SERVE_FLAGS)) {
      if (!("flag" in entry)) continue;
      assert.ok(help.includes(`${entry.flag} ${entry.description.replace(/\s+/g, " ")}`), entry.flag);
    }
  });
});
