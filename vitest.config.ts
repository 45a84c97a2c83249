import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 20_000,
    // Vitest's default is one worker fewer than the cores: a single worker on a two-core machine, which then
    // sits idle while a test waits for its child processes, a restarting server or a queue. Most of the slow
    // files wait rather than compute, so two files at a time keep both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Type tests (`*.test-d.ts`, expectTypeOf and @ts-expect-error) run with the suite: a wrong type fails it.
    // `npm test` turns this off because its typecheck step has just run tsc over the same files.
    typecheck: {
      enabled: true,
      include: ["src/**/*.test-d.ts", "test/**/*.test-d.ts"],
      tsconfig: "tsconfig.json",
    },
    coverage: {
      provider: "v8",
      include: ["src/**/*.ts"],
      exclude: ["src/**/*.test.ts", "src/**/*.test-d.ts", "src/**/index.ts", "src/cli/main.ts"],
      thresholds: { lines: 92 },
    },
  },
});
