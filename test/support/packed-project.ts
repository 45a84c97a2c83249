import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "./compile-for-children.js";

/**
 * The package as a user gets it: `npm pack` of the repository, installed from the tarball into a fresh project.
 * The commands run in child processes; nothing here imports Keel.
 */

export const run = promisify(execFile);

const requireFromRepo = createRequire(join(repoRoot, "package.json"));

/** The tarball's name and the paths in it (relative to the package root, `/` separated). */
export interface Packed {
  tarball: string;
  files: string[];
}

/** The newest modification time of the sources the build compiles. */
function newestSource(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith(".ts") && !/\.test(-d)?\.ts$/.test(entry.name))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Build dist/ when it is missing or older than src/ (`npm test` has just built it; a lone run may not have). Both
 * the bundled code and the declarations count: other tests rebuild the code alone.
 */
export async function buildIfStale(): Promise<void> {
  const newest = newestSource(join(repoRoot, "src"));
  const current = ["dist/index.js", "dist/index.d.ts"]
    .map((file) => join(repoRoot, file))
    .every((file) => existsSync(file) && statSync(file).mtimeMs >= newest);
  if (current) return;
  await run("npm", ["run", "build"], { cwd: repoRoot });
}

/** `npm pack` into `directory`. The build is not run again (`--ignore-scripts`): dist/ is current. */
export async function pack(directory: string): Promise<Packed> {
  const { stdout } = await run(
    "npm",
    ["pack", "--ignore-scripts", "--json", "--pack-destination", directory],
    {
      cwd: repoRoot,
    },
  );
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  return { tarball: join(directory, packed!.filename), files: packed!.files.map((file) => file.path) };
}

/** The version of a package the repository has installed. */
export function installedVersion(name: string): string {
  const manifest = requireFromRepo.resolve(`${name}/package.json`);
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

/**
 * A new ESM project in `directory` with the tarball and `packages` installed by npm. The repository's own install
 * filled npm's cache with Keel's dependencies, so `--prefer-offline` seldom goes to the registry.
 */
export async function installProject(directory: string, options: { tarball: string; packages: string[] }) {
  mkdirSync(directory, { recursive: true });
  writeFileSync(
    join(directory, "package.json"),
    JSON.stringify({ name: "keel-packed-check", private: true, type: "module" }, null, 2),
  );
  await run(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      options.tarball,
      ...options.packages,
    ],
    { cwd: directory },
  );
}

/** Make the repository's installed copy of `name` visible in the project's node_modules. */
export function linkFromRepo(directory: string, name: string): void {
  const source = dirname(requireFromRepo.resolve(`${name}/package.json`));
  const target = join(directory, "node_modules", name);
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(source, target, "dir");
}

/** The repository's TypeScript compiler, run on a tsconfig of the project; rejects with tsc's output. */
export async function typeCheck(directory: string, tsconfig: string): Promise<void> {
  const tsc = requireFromRepo.resolve("typescript/bin/tsc");
  try {
    await run(process.execPath, [tsc, "-p", tsconfig], { cwd: directory });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`tsc -p ${tsconfig} failed:\n${stdout ?? ""}${stderr ?? ""}`);
  }
}

/** A tsconfig a user might write: strict, `nodenext`, and Keel's declarations checked too. */
export function userTsconfig(files: string[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify(
    {
      compilerOptions: {
        strict: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        skipLibCheck: false,
        outDir: "out",
        noEmitOnError: true,
        ...extra,
      },
      files,
    },
    null,
    2,
  );
}

/**
 * A stand-in for `@ai-sdk/anthropic` so the README's AI SDK example runs offline: `anthropic(modelId)` is a
 * specification-v3 model, typed against the real `@ai-sdk/provider`, whose every answer is "42".
 */
export function writeAnthropicStub(directory: string): void {
  const root = join(directory, "node_modules/@ai-sdk/anthropic");
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, "package.json"),
    JSON.stringify({
      name: "@ai-sdk/anthropic",
      version: "0.0.0-stub",
      type: "module",
      exports: { ".": { types: "./index.d.ts", default: "./index.js" } },
    }),
  );
  writeFileSync(
    join(root, "index.d.ts"),
    'import type { LanguageModelV3 } from "@ai-sdk/provider";\nexport declare function anthropic(modelId: string): LanguageModelV3;\n',
  );
  writeFileSync(
    join(root, "index.js"),
    `const usage = {
  inputTokens: { total: 12, noCache: 12, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const parts = [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t" },
  { type: "text-delta", id: "t", delta: "42" },
  { type: "text-end", id: "t" },
  { type: "finish", finishReason: { unified: "stop", raw: "end_turn" }, usage },
];
export function anthropic(modelId) {
  return {
    specificationVersion: "v3",
    provider: "anthropic.messages",
    modelId,
    supportedUrls: {},
    async doGenerate() {
      throw new Error("the stub streams only");
    },
    async doStream() {
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
}
`,
  );
}
