import { z } from "zod";
import { defineTool, type RunStreamChunk, Runtime } from "../../src/index.js";
import { type ScriptStep, scriptedModel } from "../../src/testing/index.js";

/** `add(a, b)`: the trivial tool most scenarios use. */
export const addTool = defineTool({
  name: "add",
  description: "Add two numbers",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

/** A runtime with one agent `a` on a scripted model. */
export async function runtimeWith(
  script: readonly ScriptStep[],
  agent: Record<string, unknown> = {},
  config: Record<string, unknown> = {},
): Promise<{ runtime: Runtime; model: ReturnType<typeof scriptedModel> }> {
  const model = scriptedModel(script);
  const runtime = await Runtime.fromDict({
    ...config,
    agents: [{ id: "a", name: "Agent A", tools: [addTool], llm: model, ...agent }],
  });
  return { runtime, model };
}

export async function collect(chunks: AsyncIterable<RunStreamChunk>): Promise<RunStreamChunk[]> {
  const all: RunStreamChunk[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

/** A promise and its resolve function, for tools that wait until the test says so. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

export function toolCall(name: string, args: Record<string, unknown>, id?: string) {
  return id === undefined ? { name, arguments: args } : { id, name, arguments: args };
}
