/**
 * Child of the start-up scenario: `import` of the built package alone (`import`), or with a one-agent runtime
 * made and ready (`setup`). Prints the milliseconds from before the import to the end, and the heap after a full
 * collection when run with `--expose-gc`.
 */
const mode = process.argv[2];
const start = performance.now();
const keel = await import("../../dist/index.js");
if (mode === "setup") {
  const runtime = await keel.Runtime.fromDict({
    agents: [{ id: "a", name: "A", llm: { provider: "mock" } }],
  });
  await runtime.close();
}
const ms = performance.now() - start;
globalThis.gc?.();
process.stdout.write(`${JSON.stringify({ ms, heapBytes: process.memoryUsage().heapUsed })}\n`);
