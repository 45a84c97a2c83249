/** Keel under test: the built package (`npm run build` first) and a one-agent runtime per measurement. */
import { defineTool, Runtime } from "../dist/index.js";

export const AGENT_ID = "bench";

/** Wrap a plain tool function as a Keel tool (JSON Schema input, so no validator library is involved). */
export function keelTool(name, execute, inputSchema) {
  return defineTool({ name, description: `bench tool ${name}`, inputSchema, execute });
}

/**
 * A runtime with one agent on `model` and `tools`, defaults everywhere else (the async bus unless `events` names
 * another; the in-memory store unless `session` names another, as a config's `session` entry does).
 */
export function createKeelRuntime({ model, tools, maxSteps = 64, session, events }) {
  return Runtime.fromDict({
    ...(session === undefined ? {} : { session }),
    ...(events === undefined ? {} : { events }),
    agents: [{ id: AGENT_ID, name: "Bench", tools, llm: model, runtime: { max_steps: maxSteps } }],
  });
}
