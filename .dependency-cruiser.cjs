/**
 * Keel's layering, enforced by `npm run deps` (part of `npm test`). See docs/architecture.md ("Layers") and
 * docs/decisions/0017-layers-that-point-one-way.md.
 *
 * LAYERS lists the top-level folders of src/ lowest first: a file may import its own folder and folders that
 * come before its folder, never one that comes after. The rules below are generated from this list, so the list
 * is the one place the order is written down. `index.ts` (the package entry) sits above everything.
 */
const LAYERS = [
  // L0: the types every layer shares.
  "contracts",
  // L1: foundations.
  "util",
  "logging",
  "errors",
  "schema",
  // L2: config, events, the plugin registries and loader.
  "config",
  "events",
  "plugins",
  // L3: the seams and their implementations, each folder above the ones it needs.
  "models",
  "sandbox",
  "tools",
  "sessions",
  "context",
  "skills",
  "permissions",
  "run-folders",
  "memory",
  // L3b: implementations of the seams.
  "toolsets",
  "mcp",
  "stores",
  "queue",
  // L4: the run loop and what plugs into it.
  "middleware",
  "patterns",
  "loop",
  // L5: the one list of builtin plugins, and the Runtime facade.
  "builtins",
  "runtime",
  // L5b: the host ↔ runner protocol (keel/host): Keel as a host of runners and Keel agents served as runners.
  "host",
  // L6: entry points: the HTTP server (keel/server), the CLI (which serves it), the test helpers.
  "server",
  "cli",
  "testing",
];

/**
 * Type-only imports a layer may make of a later folder. contracts' RunResult.exception and a model stream's error
 * part are typed as KeelError, which lives in errors/ (L1) because it is a class with behaviour (redaction).
 */
const TYPE_ONLY_EXCEPTIONS = { contracts: ["errors"] };

const TESTS = "\\.test(-d)?\\.ts$|\\.int\\.test\\.ts$";

const layerRules = LAYERS.flatMap((folder, index) => {
  const later = LAYERS.slice(index + 1);
  const typeOnly = TYPE_ONLY_EXCEPTIONS[folder] ?? [];
  const strict = later.filter((other) => !typeOnly.includes(other));
  const rules = [
    {
      name: `layer-${folder}`,
      comment: `src/${folder}/ may import only folders before it in LAYERS (.dependency-cruiser.cjs).`,
      severity: "error",
      from: { path: `^src/${folder}/`, pathNot: TESTS },
      to: { path: `^src/(${strict.join("|")})/|^src/index\\.ts$` },
    },
  ];
  if (typeOnly.length > 0) {
    rules.push({
      name: `layer-${folder}-type-only`,
      comment: `src/${folder}/ may import ${typeOnly.join(", ")} for types only.`,
      severity: "error",
      from: { path: `^src/${folder}/`, pathNot: TESTS },
      to: { path: `^src/(${typeOnly.join("|")})/`, dependencyTypesNot: ["type-only"] },
    });
  }
  return rules;
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No module cycles, type-only imports included.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-unknown-folder",
      comment: "Every top-level folder of src/ has a place in LAYERS.",
      severity: "error",
      from: { path: "^src/", pathNot: `^src/(${LAYERS.join("|")})/|^src/index\\.ts$` },
      to: {},
    },
    {
      name: "not-to-unresolvable",
      comment: "Every import resolves (tests included).",
      severity: "error",
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: "resume-through-its-index",
      comment:
        "Turning a stored run into a live one is src/loop/resume/'s job: outside it, code imports its index only.",
      severity: "error",
      from: { path: "^src/", pathNot: `^src/loop/resume/|${TESTS}` },
      to: { path: "^src/loop/resume/", pathNot: "^src/loop/resume/index\\.ts$" },
    },
    {
      name: "entries-without-optional-peers",
      comment:
        "keel and keel/testing load and type-check with none of the optional peers installed: what needs one " +
        "(keel/ai-sdk, keel/testing/conformance) is an entry of its own. pg is left out: the postgres store " +
        "uses its types inside, and none of them reaches a declaration (test/packed-package.test.ts checks that).",
      severity: "error",
      from: { path: "^src/(index|testing/index)\\.ts$" },
      to: { path: "node_modules/(@ai-sdk|@modelcontextprotocol|vitest|libsql)/", reachable: true },
    },
    ...layerRules,
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^dist" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
  },
};
