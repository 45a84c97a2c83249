import {
  ActionChannel,
  type AgentRunContext,
  createInMemoryTransportPair,
  HostRunApi,
  type KeelHost,
} from "../../src/host/index.js";

/** One runner of a scripted runtime: its name and what its manifest adds to a plain one. */
export interface ScriptedRunner {
  name: string;
  capabilities?: Record<string, boolean>;
  permissions?: Record<string, string[]>;
}

/** What a scripted run does: the results it streams, with the run's proxy API to call the host with. */
export type RunScript = (context: AgentRunContext, api: HostRunApi) => AsyncIterable<Record<string, unknown>>;

/**
 * A plugin runtime in the test's hands with several runners, each with its own capabilities and permissions
 * (`plugin:test/scripted/<name>`), attached over the in-memory pair; each run plays `script`, which the test sets
 * per run (`attachScriptedRuntime` is the one-runner kind that waits for a release). The run's API is a real `HostRunApi` on the
 * runtime's end of the channel, so every call crosses the host's proxy as a runner's would.
 */
export async function attachScriptedRunners(host: KeelHost, runners: readonly ScriptedRunner[]) {
  const [hostEnd, runtimeEnd] = createInMemoryTransportPair();
  const channel = new ActionChannel({ transport: runtimeEnd });
  const state: { script: RunScript; apis: HostRunApi[] } = {
    script: async function* (context) {
      yield { run_id: context.run_id, type: "run.completed", data: { finish_reason: "stop" } };
    },
    apis: [],
  };
  channel.handle("list_agent_runners", async () => ({
    runners: runners.map((runner) => ({
      plugin_author: "test",
      plugin_name: "scripted",
      runner_name: runner.name,
      manifest: {
        id: `plugin:test/scripted/${runner.name}`,
        name: runner.name,
        label: { en_US: runner.name },
        capabilities: runner.capabilities ?? {},
        permissions: runner.permissions ?? {},
      },
    })),
  }));
  channel.handle("run_agent", (data) => {
    const context = data.context as AgentRunContext;
    const api = new HostRunApi(channel, context.run_id, context.runtime.deadline_at);
    state.apis.push(api);
    return state.script(context, api);
  });
  channel.handle("cancel_agent_run", async () => ({ cancelled: true }));
  const runtime = await host.attach(hostEnd);
  return {
    runtime,
    channel,
    /** The API of every run so far, newest last: a call on an ended run's API is a call for an ended run. */
    apis: state.apis,
    play(script: RunScript) {
      state.script = script;
    },
  };
}

/** A promise and the function that settles it, for a run that waits on the test. */
export function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => (open = resolve));
  return { opened, open };
}
