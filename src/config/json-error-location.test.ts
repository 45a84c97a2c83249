import { describe, expect, it } from "vitest";
import {
  findJsonSyntaxError,
  jsonErrorDetail,
  jsonErrorOffset,
  lineAndColumn,
} from "./json-error-location.js";

function parseError(text: string): Error {
  try {
    JSON.parse(text);
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected invalid JSON");
}

describe("findJsonSyntaxError", () => {
  it.each([
    ['{"a": 1}', undefined],
    ['  [1, -2.5e+3, "x\\u00e9\\n", true, false, null, {}, []] ', undefined],
    ['{"a": }', 6],
    ['{"a": 1,\n "b": x}', 15],
    ["[1,]", 3],
    ['{"a": 1', 7],
    ['{"a":1}}', 7],
    ['{"a" 1}', 5],
    ['{"a": 01}', 7],
    ['{"a": "x\ny"}', 8],
    ['{"a": "\\q"}', 8],
    ["", 0],
    ["{'a': 1}", 1],
  ])("%j → %j", (text, offset) => {
    expect(findJsonSyntaxError(text)).toBe(offset);
  });
});

describe("jsonErrorOffset", () => {
  it("reads V8's position, V8's line and column, or scans", () => {
    expect(
      jsonErrorOffset(
        "xxxxxxxxxx",
        new SyntaxError("Expected ',' or '}' after property value in JSON at position 7"),
      ),
    ).toBe(7);
    expect(
      jsonErrorOffset(
        '{\n  "a" 1}',
        new SyntaxError("Expected ':' after property name in JSON (line 2 column 7)"),
      ),
    ).toBe(8);
    expect(
      jsonErrorOffset('{"a": }', new SyntaxError('Unexpected token \'}\', "{"a": }" is not valid JSON')),
    ).toBe(6);
  });

  it("agrees with whatever this Node version's JSON.parse says", () => {
    for (const text of ['{"a": }', '{"a": 1', '{"a" 1}', "[1,]", '{"a":1}}']) {
      expect(jsonErrorOffset(text, parseError(text))).toBe(findJsonSyntaxError(text));
    }
  });
});

describe("lineAndColumn", () => {
  it("is 1-based", () => {
    expect(lineAndColumn("abc", 0)).toEqual({ line: 1, column: 1 });
    expect(lineAndColumn("ab\ncd\nef", 4)).toEqual({ line: 2, column: 2 });
    expect(lineAndColumn("ab\n", 3)).toEqual({ line: 2, column: 1 });
  });
});

describe("jsonErrorDetail", () => {
  it("drops V8's location and quoted text", () => {
    expect(
      jsonErrorDetail(
        new SyntaxError("Expected ':' after property name in JSON at position 5 (line 1 column 6)"),
      ),
    ).toBe("Expected ':' after property name");
    expect(
      jsonErrorDetail(new SyntaxError('Unexpected token \'x\', "{"a": 1,\n "b": x}" is not valid JSON')),
    ).toBe("Unexpected token 'x'");
    expect(jsonErrorDetail(new SyntaxError("Unexpected end of JSON input"))).toBe(
      "Unexpected end of JSON input",
    );
    const long = `{"key": "${"v".repeat(40)}", "other": "${"w".repeat(40)}", "z": x}`;
    expect(jsonErrorDetail(parseError(long))).toBe("Unexpected token 'x'");
    expect(jsonErrorDetail(parseError(`{"a": x, "b": "${"w".repeat(60)}"}`))).toBe("Unexpected token 'x'");
  });
});
