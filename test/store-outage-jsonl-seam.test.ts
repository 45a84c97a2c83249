import { mkdtempSync, rmSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { JsonlFileSessionManager } from "../src/stores/jsonl/jsonl-file-session-manager.js";
import { expectWholeRecords, type Fault, givesUpThenResumes, waitsOut } from "./support/store-faults.js";

/**
 * A full disk for the `jsonl_file` store on any machine, root or not: this file's `node:fs/promises` hands out
 * handles whose append, while the "disk" is full, writes the first half of its data and then fails with
 * `ENOSPC`, as a real file system does when it runs out of space mid-write. test/store-outage-disk.test.ts does
 * the same on a real tmpfs where it may mount one.
 */

const disk = vi.hoisted(() => ({ full: false, tornWrites: 0 }));

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  const open = async (...args: Parameters<typeof real.open>): Promise<FileHandle> => {
    const handle = await real.open(...args);
    return new Proxy(handle, {
      get(target, key) {
        if (key === "appendFile")
          return async (data: string) => {
            if (!disk.full) return target.appendFile(data);
            await target.appendFile(data.slice(0, Math.ceil(data.length / 2)));
            disk.tornWrites++;
            throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
          };
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  };
  return { ...real, open, default: { ...real, open } };
});

const full: Fault = {
  code: "store.disk_full",
  apply: () => {
    disk.full = true;
  },
  clear: () => {
    disk.full = false;
  },
};

let rootDir: string;

beforeAll(() => {
  rootDir = mkdtempSync(join(tmpdir(), "keel-seam-"));
});

afterAll(() => rmSync(rootDir, { recursive: true, force: true }));

describe("jsonl_file: appends that a full disk tears", () => {
  it("are cut back and waited out, and past store_outage_ms leave the run resumable", async () => {
    const store = new JsonlFileSessionManager({ rootDir });
    try {
      await waitsOut({ store, fault: full, runId: "seam-wait" });
      await givesUpThenResumes({
        store: store,
        fault: full,
        runId: "seam-resume",
        whileFailed: () => expectWholeRecords(rootDir),
      });
    } finally {
      await store.close();
    }
    expect(disk.tornWrites).toBeGreaterThan(0);
    expectWholeRecords(rootDir);
  });
});
