import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

let found: string | undefined;

/**
 * Keel's own package directory (the one holding its package.json), found by walking up from this module. A
 * fixed `../..` would not do: in the built package this code sits in a bundled chunk whose depth under dist/
 * depends on how the bundler split the modules, and in a checkout it runs from src/.
 */
export function packageRoot(): string {
  if (found !== undefined) return found;
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let directory = start; ; directory = path.dirname(directory)) {
    if (isKeelManifest(path.join(directory, "package.json"))) {
      found = directory;
      return directory;
    }
    if (path.dirname(directory) === directory)
      throw new Error(`No package.json named "keel" above ${start}: the package is incomplete`);
  }
}

function isKeelManifest(file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, "utf8")) as { name?: unknown }).name === "keel";
  } catch {
    return false;
  }
}
