import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { inMemorySessionManagerConfig } from "../src/builtins/builtin-session-managers.js";
import { jsonlFileSessionManagerConfig } from "../src/stores/jsonl/register-jsonl-store.js";
import { postgresStoreConfig } from "../src/stores/postgres/register-postgres-store.js";
import { sqliteStoreConfig } from "../src/stores/sqlite/register-sqlite-store.js";

/** docs/stores.md documents every key each session store's config takes, and the README leads there. */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const doc = readFileSync(path.join(root, "docs/stores.md"), "utf8");
const readme = readFileSync(path.join(root, "README.md"), "utf8");

const STORES: [string, z.ZodObject][] = [
  ["in_memory", inMemorySessionManagerConfig()],
  ["jsonl_file", jsonlFileSessionManagerConfig()],
  ["sqlite", sqliteStoreConfig()],
  ["postgres", postgresStoreConfig()],
];

/** The text of the `## \`type\`` section. */
function section(type: string): string {
  const start = doc.indexOf(`## \`${type}\``);
  expect(start, `docs/stores.md has a section for ${type}`).toBeGreaterThan(-1);
  const end = doc.indexOf("\n## ", start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
}

describe("docs/stores.md", () => {
  it.each(STORES)("lists every config key of %s in a table row", (type, schema) => {
    const text = section(type);
    for (const key of Object.keys(schema.shape))
      expect(text).toMatch(new RegExp(`^\\| \`${key}\` +\\|`, "m"));
  });

  it("says where postgres finds its server without connection_string", () => {
    expect(section("postgres")).toContain(
      "`$PGURL`, then `$DATABASE_URL`, then\n`postgres://127.0.0.1:5432/test`",
    );
  });

  it("is linked from the README, which says how to start what npm test needs", () => {
    expect(readme).toContain("(docs/stores.md)");
    expect(readme).toContain("pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start");
    expect(readme).toContain(
      'redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no',
    );
  });
});
