// Static bearer tokens, read from a file in the format of kube-apiserver's --token-auth-file:
// one `token,user,uid[,"group1,group2"]` line per user (a CSV record; blank lines and lines
// starting with # are skipped). Parsed by hand: four columns with one optional quoted field do
// not warrant a CSV dependency.
import { readFileSync } from "node:fs";
import { TesseraError } from "../../../../services/kernel/errors.ts";
import type { UserInfo } from "./user-info.ts";

function csvFields(line: string): string[] {
  const fields: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      fields.push(field);
      field = "";
    } else field += c;
  }
  fields.push(field);
  return fields.map((f) => f.trim());
}

/** Token -> user of a token file's text; a malformed line is refused naming its number. */
export function parseTokenFile(text: string, source = "token file"): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === "" || line.trimStart().startsWith("#")) return;
    const [token, name, uid, groups] = csvFields(line);
    if (!token || !name)
      throw TesseraError.invalidArgument(
        `${source} line ${index + 1}`,
        "needs at least token,user,uid (token and user not empty)",
      );
    if (tokens.has(token))
      throw TesseraError.invalidArgument(`${source} line ${index + 1}`, "repeats a token of an earlier line");
    tokens.set(token, {
      name,
      ...(uid ? { uid } : {}),
      groups: (groups ?? "")
        .split(",")
        .map((g) => g.trim())
        .filter((g) => g !== ""),
    });
  });
  return tokens;
}

export function readTokenFile(file: string): Map<string, UserInfo> {
  return parseTokenFile(readFileSync(file, "utf8"), file);
}
