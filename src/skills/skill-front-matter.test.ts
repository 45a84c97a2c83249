import { describe, expect, it } from "vitest";
import { parseAllowedTools, parseSkillDocument, parseSkillPermissions } from "./skill-front-matter.js";

describe("parseSkillDocument", () => {
  it("splits YAML front matter from the body", () => {
    expect(parseSkillDocument("---\nname: alpha\ntags: [a, b]\n---\n# Alpha\n\nDo it.\n")).toEqual({
      frontMatter: { name: "alpha", tags: ["a", "b"] },
      body: "# Alpha\n\nDo it.\n",
    });
  });

  it("handles CRLF line ends, a byte-order mark and an empty block", () => {
    expect(parseSkillDocument("\uFEFF---\r\nname: 'q'\r\n---\r\nbody")).toEqual({
      frontMatter: { name: "q" },
      body: "body",
    });
    expect(parseSkillDocument("---\n---\nbody")).toEqual({ frontMatter: {}, body: "body" });
  });

  it("treats a file without an opening --- line as having no front matter", () => {
    expect(parseSkillDocument("# Title\n---\nname: x\n---\n")).toEqual({
      frontMatter: null,
      body: "# Title\n---\nname: x\n---\n",
    });
  });

  it("throws on YAML that is invalid or not a mapping", () => {
    expect(() => parseSkillDocument("---\nname: [unclosed\n---\n")).toThrow();
    expect(() => parseSkillDocument("---\n- a\n- b\n---\n")).toThrow("not a mapping");
  });
});

describe("parseAllowedTools", () => {
  it("accepts a list or a space and/or comma separated string", () => {
    expect(parseAllowedTools(["read_file", " grep_files ", ""])).toEqual(["read_file", "grep_files"]);
    expect(parseAllowedTools("read_file, grep_files  shell_exec,write_file")).toEqual([
      "read_file",
      "grep_files",
      "shell_exec",
      "write_file",
    ]);
    expect(parseAllowedTools(undefined)).toEqual([]);
    expect(parseAllowedTools(null)).toEqual([]);
  });
});

describe("parseSkillPermissions", () => {
  it("reads a list, a string or {enable}, and reports unknown names", () => {
    expect(parseSkillPermissions(["network", "shell"])).toEqual({
      requests: ["network", "shell"],
      unknown: [],
    });
    expect(parseSkillPermissions("network, Destructive")).toEqual({
      requests: ["network", "destructive"],
      unknown: [],
    });
    expect(parseSkillPermissions({ enable: ["shell", "root"] })).toEqual({
      requests: ["shell"],
      unknown: ["root"],
    });
    expect(parseSkillPermissions(undefined)).toEqual({ requests: [], unknown: [] });
  });
});
