import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 20_000,
    // Type tests (`*.test-d.ts`, expectTypeOf and @ts-expect-error) run with the suite: a wrong type fails it.
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
