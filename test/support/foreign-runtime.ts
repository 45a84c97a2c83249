import {
  ActionChannel,
  type AgentRunContext,
  createInMemoryTransportPair,
  type KeelHostOptions,
} from "../../src/host/index.js";
import { createTestHost, RUNNER_ID } from "./host-scenario.js";

/**
 * A plugin runtime of someone else's, over the in-memory pair, attached to a test host: one runner (its manifest
 * extended by `manifest`) whose runs yield `results` and complete; `received` lists the actions it served and
 * `contexts` the run contexts it was sent.
 */
export async function attachForeign(
  options: {
    newNamesOnly?: boolean;
    results?: Record<string, unknown>[];
    manifest?: Record<string, unknown>;
    host?: Partial<KeelHostOptions>;
    closers?: (() => Promise<void> | void)[];
    /** Called inside each run before its results, with the run's context and the runtime's channel. */
    during?: (context: AgentRunContext, runtime: ActionChannel) => Promise<void>;
  } = {},
) {
  const test = createTestHost(options.host);
  const [hostEnd, runtimeEnd] = createInMemoryTransportPair();
  const runtime = new ActionChannel({ transport: runtimeEnd });
  const received: string[] = [];
  const contexts: AgentRunContext[] = [];
  const names = options.newNamesOnly
    ? { list: "list_runners", run: "run_runner" }
    : { list: "list_agent_runners", run: "run_agent" };
  runtime.handle(names.list, async (_data, context) => {
    received.push(context.action);
    return {
      runners: [
        {
          plugin_author: "keel",
          plugin_name: "agents",
          runner_name: "helper",
          manifest: { id: RUNNER_ID, name: "helper", label: { en_US: "Helper" }, ...options.manifest },
        },
      ],
    };
  });
  runtime.handle(names.run, async function* (data, context) {
    received.push(context.action);
    contexts.push(data.context as AgentRunContext);
    await options.during?.(data.context as AgentRunContext, runtime);
    const run = (data.context as AgentRunContext).run_id;
    let sequence = 0;
    for (const result of options.results ?? []) yield { run_id: run, sequence: ++sequence, ...result };
    yield { run_id: run, sequence: ++sequence, type: "run.completed", data: { finish_reason: "stop" } };
  });
  await test.host.attach(hostEnd);
  options.closers?.push(() => test.host.close());
  return { ...test, received, contexts, runtime };
}
