import assert from "node:assert/strict";
import { choicesToEbnf, regexToEbnf } from "./regex-ebnf.ts";
import { xgrammarReady } from "./xgrammar.ts";

/** Whether xgrammar's grammar for `pattern` accepts `text` in full. */
async function accepts(ebnf: string, text: string): Promise<boolean> {
  const xg = await xgrammarReady();
  const grammar = await xg.Grammar.fromEBNF(ebnf);
  try {
    return await xg.Testings.isGrammarAcceptString(grammar, text);
  } finally {
    grammar.dispose();
  }
}

describe("regexToEbnf", () => {
  // Each pattern against strings it must and must not match in full; JavaScript's RegExp says the same.
  const cases: [string, string[], string[]][] = [
    ["^[a-z]+@[a-z]+\\.com$", ["bob@x.com"], ["bob@x.org", "@x.com", "bob@x.comm"]],
    ["\\d{3}-\\d{4}", ["555-1234"], ["55-1234", "555-12345"]],
    ["(cat|dog)s?", ["cat", "dogs"], ["cow", "catss"]],
    ["a{2,}b", ["aab", "aaaab"], ["ab", "b"]],
    ["a{1,3}?", ["a", "aaa"], ["", "aaaa"]],
    ['[^\\n"]{0,5}', ["", "héllo", "a b"], ["toolong", 'a"', "a\nb"]],
    ["(?:x|)y\\.", ["y.", "xy."], ["x.", "yy"]],
    ["(?<word>\\w+) \\s?\\S", ["a_1 x", "b  y"], ["a x y", " x"]],
    ["[\\d.+-]+e\\x41\\u00e9", ["1.5+eAé", "-eAé"], ["eAé", "1eAe"]],
    ["\\.\\*\\(\\)\\[\\]\\{\\}\\|\\?\\\\", [".*()[]{}|?\\"], ["x"]],
    ["😀+|x", ["😀😀", "x"], ["😀x"]],
    ["a.c", ["abc", "a c"], ["a\nc", "ac"]],
  ];
  for (const [pattern, yes, no] of cases) {
    it(`/${pattern}/ matches what RegExp matches`, async () => {
      const ebnf = regexToEbnf(pattern);
      assert.equal(ebnf.error, undefined);
      const re = new RegExp(`^(?:${pattern.replace(/^\^|\$$/g, "")})$`, "u");
      for (const text of yes) {
        assert.ok(re.test(text), `RegExp itself matches ${JSON.stringify(text)}`);
        assert.ok(await accepts(ebnf.value!, text), `${ebnf.value} accepts ${JSON.stringify(text)}`);
      }
      for (const text of no) {
        assert.ok(!re.test(text), `RegExp itself refuses ${JSON.stringify(text)}`);
        assert.ok(!(await accepts(ebnf.value!, text)), `${ebnf.value} refuses ${JSON.stringify(text)}`);
      }
    });
  }

  it("refuses what a grammar cannot express, saying what and where", () => {
    const cases: [string, RegExp][] = [
      ["a(?=b)", /^lookaround/],
      ["(?i)a", /^lookaround and inline flags/],
      ["(a)\\1", /^backreferences/],
      ["\\bx", /^word boundaries/],
      ["a$b", /^\$ is supported only at the end/],
      ["a^", /^\^ is supported only at the start/],
      ["*a", /^nothing to repeat/],
      ["a**", /^nested quantifier/],
      ["a++", /^possessive/],
      ["(a", /^missing \)/],
      ["a)", /^unbalanced \)/],
      ["[a", /^missing \]/],
      ["[z-a]", /^range out of order/],
      ["a{3,1}", /^\{n,m\} with m < n/],
      ["a{5000}", /^repetition counts above/],
      ["\\q", /^unknown escape/],
      ["[\\D]", /not supported inside/],
    ];
    for (const [pattern, message] of cases) {
      const out = regexToEbnf(pattern);
      assert.match(out.error ?? "(translated)", message, pattern);
      assert.match(out.error!, /\(at character \d+\)$/);
    }
  });
});

describe("choicesToEbnf", () => {
  it("accepts exactly one of the choices, quotes and all", async () => {
    const ebnf = choicesToEbnf(["yes", "no", 'say "hi"\n']);
    for (const text of ["yes", "no", 'say "hi"\n']) assert.ok(await accepts(ebnf, text), text);
    for (const text of ["ye", "yesno", "", "say"]) assert.ok(!(await accepts(ebnf, text)), text);
  });
});
