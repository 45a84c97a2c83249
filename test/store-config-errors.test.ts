import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PluginConfigError, Runtime } from "../src/index.js";

/** A session store's config with a required key misspelt is the error that names the key meant. */

const dir = mkdtempSync(join(tmpdir(), "keel-store-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function loadError(session: Record<string, unknown>): Promise<PluginConfigError> {
  const runtime = new Runtime({ session, agents: [{ id: "a", name: "A" }] });
  const error = await runtime.ready().then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  await runtime.close();
  expect(error).toBeInstanceOf(PluginConfigError);
  return error as PluginConfigError;
}

describe("session store config near misses", () => {
  it("sqlite: path for db_path", async () => {
    const error = await loadError({ type: "sqlite", config: { path: join(dir, "keel.db") } });
    expect(error.message).toBe('session "sqlite": unknown config key "path"; did you mean "db_path"?');
    expect(error.hint).toMatch(/^Rename "path" to "db_path" \(known keys: db_path, /);
  });

  it("jsonl_file: root for root_dir", async () => {
    const error = await loadError({ type: "jsonl_file", config: { root: dir } });
    expect(error.message).toBe('session "jsonl_file": unknown config key "root"; did you mean "root_dir"?');
  });
});
