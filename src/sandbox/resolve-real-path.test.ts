import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveRealPath } from "./resolve-real-path.js";

const base = realpathSync(mkdtempSync(path.join(tmpdir(), "keel-resolve-")));
mkdirSync(path.join(base, "dir", "sub"), { recursive: true });
writeFileSync(path.join(base, "dir", "file.txt"), "x");
symlinkSync("dir", path.join(base, "rel-link"));
symlinkSync(path.join(base, "dir", "sub"), path.join(base, "abs-link"));
symlinkSync("missing/target.txt", path.join(base, "dangling"));
symlinkSync("../file.txt", path.join(base, "dir", "sub", "up-link"));
symlinkSync("self", path.join(base, "self"));

afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("resolveRealPath", () => {
  it("resolves an existing path through relative and absolute symlinks", async () => {
    const viaRelative = await resolveRealPath(path.join(base, "rel-link", "file.txt"));
    expect(viaRelative).toMatchObject({
      real: path.join(base, "dir", "file.txt"),
      exists: true,
      missing: [],
    });
    expect(viaRelative.stats!.isFile()).toBe(true);
    const viaAbsolute = await resolveRealPath(path.join(base, "abs-link", "up-link"));
    expect(viaAbsolute.real).toBe(path.join(base, "dir", "file.txt"));
  });

  it("keeps the missing rest below the deepest existing ancestor", async () => {
    const resolved = await resolveRealPath(path.join(base, "rel-link", "new", "deeper", "x.txt"));
    expect(resolved).toMatchObject({
      real: path.join(base, "dir", "new", "deeper", "x.txt"),
      exists: false,
      stats: undefined,
      existingAncestor: path.join(base, "dir"),
      missing: ["new", "deeper", "x.txt"],
    });
  });

  it("follows a dangling symlink to where a new file would land", async () => {
    const resolved = await resolveRealPath(path.join(base, "dangling"));
    expect(resolved).toMatchObject({
      real: path.join(base, "missing", "target.txt"),
      exists: false,
      missing: ["missing", "target.txt"],
    });
  });

  it("handles .. after a missing component and after a symlink", async () => {
    expect((await resolveRealPath(path.join(base, "nope", "..", "dir"))).real).toBe(path.join(base, "dir"));
    // The kernel's meaning: .. of a symlinked directory is the parent of its target.
    expect((await resolveRealPath(`${base}/abs-link/../file.txt`)).real).toBe(
      path.join(base, "dir", "file.txt"),
    );
  });

  it("resolves the filesystem root", async () => {
    expect(await resolveRealPath("/")).toMatchObject({ real: "/", exists: true });
  });

  it("stops a symlink loop with ELOOP and a file used as a directory with ENOTDIR", async () => {
    await expect(resolveRealPath(path.join(base, "self"))).rejects.toMatchObject({ code: "ELOOP" });
    await expect(resolveRealPath(path.join(base, "dir", "file.txt", "x"))).rejects.toMatchObject({
      code: "ENOTDIR",
    });
  });

  it("from a known canonical directory: the same answers as from /, stats included", async () => {
    const paths = [
      path.join(base, "rel-link", "file.txt"),
      path.join(base, "abs-link", "up-link"),
      path.join(base, "rel-link", "new", "deeper", "x.txt"),
      path.join(base, "dangling"),
      path.join(base, "dir"),
      base,
      `${base}/abs-link/../file.txt`,
    ];
    for (const absolute of paths) {
      const fromRoot = await resolveRealPath(absolute);
      const fromBase = await resolveRealPath(absolute, base);
      expect({ ...fromBase, stats: undefined }, absolute).toEqual({ ...fromRoot, stats: undefined });
      expect(fromBase.stats?.ino, absolute).toBe(fromRoot.stats?.ino);
    }
    // A symlink that leads out of the known directory is still followed out of it.
    expect(
      (await resolveRealPath(path.join(base, "dir", "sub", "up-link"), path.join(base, "dir", "sub"))).real,
    ).toBe(path.join(base, "dir", "file.txt"));
  });
});
