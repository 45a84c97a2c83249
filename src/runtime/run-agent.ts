import type { AppConfig } from "../config/app-config-schema.js";
import type { KeelConfig } from "../config/keel-config.js";
import type { RunRequest, RunResult } from "../contracts/run-types.js";
import { Runtime } from "./runtime.js";
import type { RunStreamChunk } from "./stream-chunk.js";

type ConfigSource = string | KeelConfig | AppConfig;

async function open(source: ConfigSource): Promise<Runtime> {
  return typeof source === "string" ? Runtime.fromConfig(source) : Runtime.fromDict(source);
}

/** Create a runtime from a path or config, run once, close it; resolves with the final output. */
export async function runAgent<T = unknown>(source: ConfigSource, request: RunRequest<T>): Promise<T> {
  const runtime = await open(source);
  try {
    return await runtime.run(request);
  } finally {
    await runtime.close();
  }
}

/** Like `runAgent`, resolving with the whole RunResult. */
export async function runAgentDetailed<T = unknown>(
  source: ConfigSource,
  request: RunRequest<T>,
): Promise<RunResult<T>> {
  const runtime = await open(source);
  try {
    return await runtime.runDetailed(request);
  } finally {
    await runtime.close();
  }
}

/** Like `runAgent`, yielding the run's chunks as they happen. */
export async function* streamAgent(
  source: ConfigSource,
  request: RunRequest,
): AsyncGenerator<RunStreamChunk> {
  const runtime = await open(source);
  try {
    yield* runtime.stream(request);
  } finally {
    await runtime.close();
  }
}
