import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "./support/compile-for-children.js";
import {
  buildIfStale,
  installedVersion,
  installProject,
  linkFromRepo,
  type Packed,
  pack,
  run,
  typeCheck,
  userTsconfig,
  writeAnthropicStub,
} from "./support/packed-project.js";
import { relativeLinks, type Snippet, tsSnippets } from "./support/readme-snippets.js";

/**
 * Keel as a user installs it: the packed tarball in a fresh strict TypeScript project with only zod beside it.
 * The README's TypeScript examples are type-checked there with Keel's declarations included (skipLibCheck off)
 * and run, the entries load by import and by require, and the tarball carries what its files point at.
 */

// Packing, installing and two tsc runs over Keel's declarations take tens of seconds on a busy machine.
const SLOW = 300_000;

const root = mkdtempSync(join(tmpdir(), "keel-packed-"));
const app = join(root, "app");
let packed: Packed;

const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
const snippets = tsSnippets(readme);
const needsAiSdk = (snippet: Snippet) => snippet.imports.some((name) => name.startsWith("@ai-sdk/"));
const plainSnippets = snippets.filter((snippet) => !needsAiSdk(snippet));
const aiSdkSnippets = snippets.filter(needsAiSdk);

const js = (snippet: Snippet) => `out/${snippet.name.replace(/\.ts$/, ".js")}`;

/** Run a snippet's compiled code in the project and check it prints what its comments promise. */
async function runSnippet(snippet: Snippet): Promise<void> {
  const { stdout } = await run(process.execPath, [js(snippet)], {
    cwd: app,
    env: { ...process.env, NO_COLOR: "1" },
  });
  const lines = stdout.split("\n").map((line) => line.trim());
  for (const expected of snippet.expectedOutput) {
    expect(lines, `README.md line ${snippet.line}: prints "${expected}"`).toContain(expected);
  }
}

beforeAll(async () => {
  await buildIfStale();
  packed = await pack(root);
  await installProject(app, { tarball: packed.tarball, packages: [`zod@${installedVersion("zod")}`] });
  for (const snippet of snippets) writeFileSync(join(app, snippet.name), snippet.code);
}, SLOW);

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("the packed package", { timeout: SLOW }, () => {
  it("carries its license, and neither source maps without their sources nor tests", () => {
    const files = new Set(packed.files);
    expect([...files].filter((file) => !file.includes("/")).sort()).toEqual([
      "LICENSE",
      "README.md",
      "package.json",
    ]);
    expect(readFileSync(join(app, "node_modules/keel/LICENSE"), "utf8")).toMatch(/^MIT License/);
    // A map ships only with the sources it names.
    for (const map of [...files].filter((file) => file.endsWith(".map"))) {
      const { sources } = JSON.parse(readFileSync(join(app, "node_modules/keel", map), "utf8")) as {
        sources: string[];
      };
      for (const source of sources)
        expect(files, `${map} → ${source}`).toContain(posix.join(posix.dirname(map), source));
    }
    expect([...files].filter((file) => /\.test(-d)?\.|\.int\.test\./.test(file))).toEqual([]);
  });

  it("exports files it has, each under a default condition, and runs no script at install", () => {
    const files = new Set(packed.files);
    const manifest = JSON.parse(readFileSync(join(app, "node_modules/keel/package.json"), "utf8"));
    const targets = Object.values(
      manifest.exports as Record<string, string | Record<string, string>>,
    ).flatMap((target) => (typeof target === "string" ? [target] : Object.values(target)));
    for (const target of [...targets, ...Object.values(manifest.bin as Record<string, string>)]) {
      expect(files, target).toContain(posix.normalize(target));
    }
    for (const [entry, target] of Object.entries(manifest.exports as Record<string, unknown>)) {
      if (typeof target === "object") expect(Object.keys(target as object), entry).toContain("default");
    }
    // Nothing runs at install time, so npm has no script to warn about.
    for (const script of ["preinstall", "install", "postinstall", "prepare"]) {
      expect(manifest.scripts?.[script], script).toBeUndefined();
    }
  });

  it("has every file its README and docs link to", () => {
    const files = new Set(packed.files);
    for (const markdown of [...files].filter((file) => file.endsWith(".md"))) {
      const text = readFileSync(join(app, "node_modules/keel", markdown), "utf8");
      for (const link of relativeLinks(text)) {
        const target = posix.normalize(posix.join(posix.dirname(markdown), link)).replace(/\/$/, "");
        const found = files.has(target) || [...files].some((file) => file.startsWith(`${target}/`));
        expect(found, `${markdown} links ${link}`).toBe(true);
      }
    }
  });

  it("carries the built web console that keel serve serves", () => {
    const files = packed.files;
    expect(files).toContain("dist/console/index.html");
    expect(files.filter((file) => file.startsWith("dist/console/assets/")).length).toBeGreaterThan(0);
  });

  it("installs none of its optional peers", () => {
    for (const peer of ["libsql", "pg", "vitest", "@ai-sdk/provider", "@modelcontextprotocol/sdk"]) {
      expect(existsSync(join(app, "node_modules", peer)), peer).toBe(false);
    }
  });

  it("type-checks the README's examples with Keel's declarations, zod the only package beside it", async () => {
    // Each example is a program of its own, using nothing a reader would have to install besides keel and zod.
    expect(plainSnippets.length).toBeGreaterThanOrEqual(2);
    for (const snippet of plainSnippets) {
      for (const name of snippet.imports) {
        expect(["keel", "keel/testing", "zod"], `README.md line ${snippet.line} imports ${name}`).toContain(
          name,
        );
      }
    }
    writeFileSync(
      join(app, "tsconfig.json"),
      userTsconfig(
        plainSnippets.map((snippet) => snippet.name),
        { types: [] },
      ),
    );
    await typeCheck(app, "tsconfig.json");
  });

  it("runs the README's examples on the offline scripted model", async () => {
    for (const snippet of plainSnippets) await runSnippet(snippet);
  });

  it("loads by require as well as by import, and keel/testing without vitest", async () => {
    const required = await run(
      process.execPath,
      [
        "-e",
        'const keel = require("keel"); console.log(typeof keel.Runtime, typeof require("keel/testing").scriptedModel)',
      ],
      { cwd: app },
    );
    expect(required.stdout.trim()).toBe("function function");

    const imported = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const { scriptedModel } = await import("keel/testing"); console.log(typeof scriptedModel)',
      ],
      { cwd: app },
    );
    expect(imported.stdout.trim()).toBe("function");

    // The suites that need vitest are the entry that asks for it.
    await expect(
      run(process.execPath, ["--input-type=module", "-e", 'await import("keel/testing/conformance")'], {
        cwd: app,
      }),
    ).rejects.toMatchObject({ stderr: expect.stringContaining("'vitest'") });
  });

  it("asks for libsql by name when the sqlite store has no binding", async () => {
    writeFileSync(
      join(app, "sqlite-store.mjs"),
      `import { Runtime } from "keel";
try {
  const runtime = await Runtime.fromDict({
    agents: [{ id: "a", name: "A" }],
    session: { type: "sqlite", config: { db_path: "keel.db" } },
  });
  await runtime.close();
  console.log(JSON.stringify({ opened: true }));
} catch (error) {
  console.log(JSON.stringify({ name: error.name, hint: error.hint, message: error.message }));
}
`,
    );
    const { stdout } = await run(process.execPath, ["sqlite-store.mjs"], { cwd: app });
    const outcome = JSON.parse(stdout);
    if (process.getBuiltinModule?.("node:sqlite")) expect(outcome).toEqual({ opened: true });
    else {
      expect(outcome).toMatchObject({ name: "PluginLoadError", hint: "npm install libsql" });
      expect(outcome.message).toContain("libsql");
    }
  });

  it("type-checks and runs the README's AI SDK example with @ai-sdk/provider and Node's types installed", async () => {
    expect(aiSdkSnippets.length).toBeGreaterThanOrEqual(1);
    // The real provider types; a stand-in for the provider package, so the example runs offline.
    linkFromRepo(app, "@ai-sdk/provider");
    linkFromRepo(app, "@types/node");
    writeAnthropicStub(app);
    // @ai-sdk/provider's own declarations import json-schema, whose types it lists only among its
    // devDependencies; without skipLibCheck a project declares that module itself, as tsc's hint says.
    writeFileSync(
      join(app, "json-schema.d.ts"),
      'declare module "json-schema" {\n  export interface JSONSchema7 {\n    [key: string]: unknown;\n  }\n  export type JSONSchema7Definition = JSONSchema7 | boolean;\n}\n',
    );
    writeFileSync(
      join(app, "tsconfig.ai-sdk.json"),
      userTsconfig([...aiSdkSnippets.map((snippet) => snippet.name), "json-schema.d.ts"], {
        lib: ["es2023"],
        types: ["node"],
      }),
    );
    await typeCheck(app, "tsconfig.ai-sdk.json");
    for (const snippet of aiSdkSnippets) await runSnippet(snippet);
  });
});

describe("the README's TypeScript examples", () => {
  it("are all run by this test", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(3);
    expect([...plainSnippets, ...aiSdkSnippets].map((snippet) => snippet.name).sort()).toEqual(
      snippets.map((snippet) => snippet.name).sort(),
    );
    for (const snippet of snippets) {
      expect(
        snippet.expectedOutput.length,
        `README.md line ${snippet.line} prints what it shows`,
      ).toBeGreaterThan(0);
    }
  });
});
