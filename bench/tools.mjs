/** The benchmark tools, as plain functions (for the hand-written loop) and their JSON Schemas. */

/** The trivial synchronous tool of S1/S5. */
export const add = ({ a, b }) => a + b;

export const ADD_SCHEMA = Object.freeze({
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
});

export const WAIT_SCHEMA = Object.freeze({ type: "object", properties: {} });

/**
 * S3: a tool that blocks on a promise until the benchmark resolves it (a pending approval, a slow service).
 * `execute` parks the call and keeps its resolver in `resolvers`.
 */
export function createParkingTool() {
  const resolvers = [];
  return {
    resolvers,
    execute: () =>
      new Promise((resolve) => {
        resolvers.push(resolve);
      }),
  };
}
