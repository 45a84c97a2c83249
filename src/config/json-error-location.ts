/**
 * Where a JSON syntax error is. V8 says it in three ways depending on the Node version and the error: "… in JSON at
 * position N", "… (line L column C)", or not at all ("Unexpected token 'x', "…" is not valid JSON"). The last
 * case is found by scanning the text ourselves.
 */

class ScanStop {
  constructor(readonly offset: number) {}
}

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/** The offset of the first character that makes `text` invalid JSON, or `undefined` when it is valid. */
export function findJsonSyntaxError(text: string): number | undefined {
  let i = 0;
  const stop = (): never => {
    throw new ScanStop(i);
  };
  const skipWhitespace = () => {
    while (i < text.length && WHITESPACE.has(text[i] as string)) i++;
  };
  const expect = (char: string) => {
    if (text[i] !== char) stop();
    i++;
  };
  const digits = () => {
    const start = i;
    while (i < text.length && (text[i] as string) >= "0" && (text[i] as string) <= "9") i++;
    if (i === start) stop();
  };
  const string = () => {
    expect('"');
    while (true) {
      if (i >= text.length) stop();
      const char = text[i] as string;
      if (char === '"') {
        i++;
        return;
      }
      if (char.charCodeAt(0) < 0x20) stop();
      if (char === "\\") {
        i++;
        if (text[i] === "u") {
          i++;
          for (let k = 0; k < 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i] ?? "")) stop();
            i++;
          }
          continue;
        }
        if (!ESCAPES.has(text[i] ?? "")) stop();
      }
      i++;
    }
  };
  const number = () => {
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else digits();
    if (text[i] === ".") {
      i++;
      digits();
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      digits();
    }
  };
  const value = (): void => {
    skipWhitespace();
    const char = text[i];
    if (char === "{") {
      i++;
      skipWhitespace();
      if (text[i] === "}") {
        i++;
        return;
      }
      while (true) {
        skipWhitespace();
        string();
        skipWhitespace();
        expect(":");
        value();
        skipWhitespace();
        if (text[i] !== ",") {
          expect("}");
          return;
        }
        i++;
      }
    }
    if (char === "[") {
      i++;
      skipWhitespace();
      if (text[i] === "]") {
        i++;
        return;
      }
      while (true) {
        value();
        skipWhitespace();
        if (text[i] !== ",") {
          expect("]");
          return;
        }
        i++;
      }
    }
    if (char === '"') {
      string();
      return;
    }
    if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) {
      number();
      return;
    }
    for (const literal of ["true", "false", "null"]) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return;
      }
    }
    stop();
  };
  try {
    value();
    skipWhitespace();
    if (i < text.length) stop();
    return undefined;
  } catch (error) {
    if (error instanceof ScanStop) return Math.min(error.offset, text.length);
    throw error;
  }
}

/** The offset a `JSON.parse` error points at in `text`. */
export function jsonErrorOffset(text: string, error: Error): number {
  const position = /at position (\d+)/.exec(error.message);
  if (position) return Number(position[1]);
  const lineColumn = /\(line (\d+) column (\d+)\)/.exec(error.message);
  if (lineColumn) {
    const line = Number(lineColumn[1]);
    let offset = 0;
    for (let current = 1; current < line; current++) {
      const newline = text.indexOf("\n", offset);
      if (newline === -1) break;
      offset = newline + 1;
    }
    return offset + Number(lineColumn[2]) - 1;
  }
  return findJsonSyntaxError(text) ?? text.length;
}

/** 1-based line and column of an offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - (before.lastIndexOf("\n") + 1) + 1 };
}

/**
 * V8's description without its own location (it would point into the env-expanded text) and without the copy
 * of the text some messages quote.
 */
export function jsonErrorDetail(error: Error): string {
  const quoting = /^(Unexpected token .*?), (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s.exec(
    error.message,
  );
  if (quoting) return quoting[1] as string;
  return error.message
    .replace(/\s*\(line \d+ column \d+\)/, "")
    .replace(/ in JSON at position \d+/, "")
    .trim();
}
