import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useBuiltCli } from "./support/cli-process.js";
import { repoRoot } from "./support/compile-for-children.js";

/**
 * `import("keel")` builds no zod schema: Keel's config schemas, and each builtin's, are built the first time a
 * config is parsed or names that builtin. Counted in a child process running the built package: zod reads
 * `_zod` on every schema it constructs before giving it one, so a getter on `Object.prototype` sees each
 * construction.
 */

useBuiltCli();

const PROBE = `
await import("zod");
let constructed = 0;
Object.defineProperty(Object.prototype, "_zod", { configurable: true, get() { constructed++; return undefined; } });
const count = () => { const n = constructed; constructed = 0; return n; };
const keel = await import(${JSON.stringify(join(repoRoot, "dist/index.js"))});
const atImport = count();
const { z } = await import("zod");
z.string();
const probe = count();
const runtime = await keel.Runtime.fromDict({ agents: [{ id: "a", name: "A", llm: { provider: "mock" } }] });
const atSetUp = count();
await runtime.close();
const second = await keel.Runtime.fromDict({ agents: [{ id: "b", name: "B", llm: { provider: "mock" } }] });
const atSecondSetUp = count();
await second.close();
process.stdout.write(JSON.stringify({ atImport, probe, atSetUp, atSecondSetUp }));
`;

describe("zod schemas on first use", () => {
  it("builds none at import, the config's and the named builtins' at the first set-up, none again", () => {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", PROBE], {
      cwd: repoRoot,
      encoding: "utf8",
    });
    const counts = JSON.parse(out) as Record<string, number>;
    // The probe sees a schema being made; without this the zero below could not fail.
    expect(counts.probe).toBeGreaterThan(0);
    expect(counts.atImport).toBe(0);
    expect(counts.atSetUp).toBeGreaterThan(100);
    expect(counts.atSecondSetUp).toBe(0);
  });
});
