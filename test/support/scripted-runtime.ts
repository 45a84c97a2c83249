import {
  type ActionCallError,
  ActionChannel,
  type AgentRunContext,
  createInMemoryTransportPair,
  HostRunApi,
  type KeelHost,
} from "../../src/host/index.js";

/**
 * A plugin runtime written in the test: one runner with the given permissions, whose run hands its context and a
 * proxy client to the test and ends `run.completed` once the test releases it.
 */
export async function attachScriptedRuntime(host: KeelHost, permissions: Record<string, string[]>) {
  const [hostEnd, runtimeEnd] = createInMemoryTransportPair();
  const channel = new ActionChannel({ transport: runtimeEnd });
  const runs: { context: AgentRunContext; api: HostRunApi; release: () => void }[] = [];
  channel.handle("list_agent_runners", async () => ({
    runners: [
      {
        plugin_author: "test",
        plugin_name: "scripted",
        runner_name: "r",
        manifest: { id: RUNNER, name: "r", label: { en_US: "R" }, permissions },
      },
    ],
  }));
  channel.handle("run_agent", async function* (data) {
    const context = data.context as AgentRunContext;
    await new Promise<void>((release) => {
      runs.push({
        context,
        api: new HostRunApi(channel, context.run_id, context.runtime.deadline_at),
        release,
      });
    });
    yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" }, sequence: 1 };
  });
  const runtime = await host.attach(hostEnd);
  return { channel, runtime, runs };
}

export const RUNNER = "plugin:test/scripted/r";

/** The host's error code a call was refused with, or undefined when it was answered. */
export async function apiCodeOf(call: Promise<unknown>): Promise<string | undefined> {
  return call.then(
    () => undefined,
    (thrown: unknown) =>
      (thrown as { apiCode?: string }).apiCode ??
      (thrown as ActionCallError).apiError?.apiCode ??
      String(thrown),
  );
}
