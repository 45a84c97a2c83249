/**
 * ST start-up: what a CLI call, a serverless cold start or a test file pays before the first run. Each figure
 * is a fresh child process, median of N (`--quick`: 3): `import` of the package alone and `import` plus a
 * ready one-agent `Runtime.fromDict` (both timed inside the child, from before the import), and the whole wall
 * time of `keel --version` and `keel validate` on a one-agent config, beside `node -e 0` (Node's own start).
 * `modules` counts the modules the import loads (a loader hook, in a separate child: it slows what it counts).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, now, round } from "../measure.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(here, "../children/startup-child.mjs");
const LOADER = path.join(here, "../children/count-modules-loader.mjs");
const CLI = path.join(here, "../../dist/cli/main.js");

function run(args) {
  return new Promise((resolve, reject) => {
    const start = now();
    execFile(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      error ? reject(error) : resolve({ wallMs: now() - start, stdout, stderr }),
    );
  });
}

async function countModules(mode) {
  const { stderr } = await run(["--no-warnings", "--loader", LOADER, CHILD, mode]);
  const urls = stderr.split("\n").filter((line) => line.startsWith("keel-bench-module "));
  return {
    modules: urls.length,
    keelModules: urls.filter((line) => line.includes("/dist/")).length,
  };
}

export async function startup({ quick, log }) {
  const reps = quick ? 3 : 11;
  const dir = mkdtempSync(path.join(tmpdir(), "keel-startup-"));
  const config = path.join(dir, "agent.json");
  writeFileSync(config, JSON.stringify({ agents: [{ id: "a", name: "A", llm: { provider: "mock" } }] }));
  const samples = {
    import: [],
    setup: [],
    importHeap: [],
    setupHeap: [],
    node: [],
    version: [],
    validate: [],
  };
  try {
    for (let rep = 0; rep < reps; rep++) {
      for (const mode of ["import", "setup"]) {
        const { stdout } = await run(["--expose-gc", CHILD, mode]);
        const figures = JSON.parse(stdout);
        samples[mode].push(figures.ms);
        samples[`${mode}Heap`].push(figures.heapBytes);
      }
      samples.node.push((await run(["-e", "0"])).wallMs);
      samples.version.push((await run([CLI, "--version"])).wallMs);
      samples.validate.push((await run([CLI, "validate", config])).wallMs);
      log(
        `  rep ${rep + 1}/${reps}: import ${samples.import.at(-1).toFixed(1)} ms, import + set-up ` +
          `${samples.setup.at(-1).toFixed(1)} ms, keel --version ${samples.version.at(-1).toFixed(1)} ms`,
      );
    }
    const importCount = await countModules("import");
    const setupCount = await countModules("setup");
    return [
      {
        scenario: "ST",
        impl: "keel",
        importMs: round(median(samples.import), 1),
        importSetupMs: round(median(samples.setup), 1),
        importHeapMb: round(median(samples.importHeap) / 1e6, 1),
        importSetupHeapMb: round(median(samples.setupHeap) / 1e6, 1),
        nodeStartMs: round(median(samples.node), 1),
        versionWallMs: round(median(samples.version), 1),
        validateWallMs: round(median(samples.validate), 1),
        modulesImport: importCount.modules,
        keelModulesImport: importCount.keelModules,
        modulesImportSetup: setupCount.modules,
        keelModulesImportSetup: setupCount.keelModules,
        reps,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
