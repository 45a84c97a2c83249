import * as client10 from "@ag-ui/client";
import * as client0059 from "ag-ui-client-0059";
import { from, lastValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import { defineTool, type Runtime, SuspendToolCall } from "../src/index.js";
import { createAgUiApp } from "../src/server/ag-ui/index.js";
import type { ScriptStep } from "../src/testing/index.js";
import { addTool, runtimeWith, toolCall } from "./support/harness.js";

type Profile = "0.0.59" | "1.0";
type Event = { type: string; [key: string]: unknown };

/** Each real client line, with the profile it is served. */
const CLIENTS = [
  {
    name: "@ag-ui/client 0.0.59",
    lib: client0059 as unknown as typeof client10,
    profile: "0.0.59" as Profile,
  },
  { name: "@ag-ui/client 1.0", lib: client10, profile: "1.0" as Profile },
  { name: "@ag-ui/client 1.0 on the default profile", lib: client10, profile: undefined },
] as const;

const gated = defineTool({
  name: "gated",
  description: "Needs a human's approval",
  approvalMode: "always",
  execute: ({ q }: { q?: number }) => `ran with ${q}`,
});

/** Asks the person which city, and waits for the answer: the answer is the call's result. */
const askCity = defineTool({
  name: "ask_city",
  description: "Asks the user for a city",
  execute: () => {
    throw new SuspendToolCall({ reason: "Which city?", responseSchema: { type: "string" } });
  },
});

async function agentFor(script: readonly ScriptStep[], tools: unknown[] = [addTool, gated]) {
  const { runtime } = await runtimeWith(script, { tools });
  return runtime;
}

/** A real HttpAgent whose requests go to the AG-UI app in process. */
function httpAgent(lib: typeof client10, runtime: Runtime, profile: Profile | undefined) {
  const app = createAgUiApp(runtime);
  const query = profile === undefined ? "" : `?protocol=${profile}`;
  return new lib.HttpAgent({
    url: `http://keel.test/a${query}`,
    threadId: "thread-1",
    fetch: (url: string | URL | Request, init?: RequestInit) => app.fetch(new Request(url, init)),
  } as ConstructorParameters<typeof lib.HttpAgent>[0]);
}

/** Runs the agent once; the events it applied, any failure it reported, and `verifyEvents` over the events. */
async function runOnce(
  lib: typeof client10,
  agent: InstanceType<typeof client10.HttpAgent>,
  params: Parameters<typeof agent.runAgent>[0] = {},
) {
  const events: Event[] = [];
  const failures: unknown[] = [];
  let thrown: unknown;
  try {
    await agent.runAgent(params, {
      onEvent: ({ event }) => {
        events.push(event as unknown as Event);
      },
      onRunFailed: ({ error }) => {
        failures.push(error);
      },
    });
  } catch (error) {
    thrown = error;
  }
  const verified = await lastValueFrom(
    from(events as unknown as client10.BaseEvent[]).pipe(lib.verifyEvents(false), toArray()),
  );
  expect(verified).toHaveLength(events.length);
  return { events, failures, thrown, types: events.map((event) => event.type) };
}

function userMessage(text: string) {
  return { id: `u-${text}`, role: "user" as const, content: text };
}

describe.each(CLIENTS)("AG-UI with $name", ({ lib, profile }) => {
  it("streams a text run: started, step, one text message, finished with the output", async () => {
    const runtime = await agentFor([{ deltas: ["Hel", "lo"] }]);
    const agent = httpAgent(lib, runtime, profile);
    agent.addMessage(userMessage("hi"));
    const { types, events, failures, thrown } = await runOnce(lib, agent);
    expect(thrown).toBeUndefined();
    expect(failures).toEqual([]);
    expect(types).toEqual([
      "RUN_STARTED",
      "STEP_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED",
      "RUN_FINISHED",
    ]);
    expect(events[0]).toMatchObject({ threadId: "thread-1" });
    expect(events.at(-1)).toMatchObject({ result: "Hello", outcome: { type: "success" } });
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", content: "Hello" });
  });

  it("streams a tool-calling run: the call, its arguments and its result in the client's messages", async () => {
    const runtime = await agentFor([
      { text: "Adding", toolCalls: [toolCall("add", { a: 2, b: 3 }, "c-add")] },
      { text: "It is 5" },
    ]);
    const agent = httpAgent(lib, runtime, profile);
    agent.addMessage(userMessage("add"));
    const { types, events, failures } = await runOnce(lib, agent);
    expect(failures).toEqual([]);
    expect(types).toContain("TOOL_CALL_START");
    expect(types.indexOf("TOOL_CALL_END")).toBeLessThan(types.indexOf("TOOL_CALL_RESULT"));
    expect(events.find((event) => event.type === "TOOL_CALL_ARGS")).toMatchObject({
      toolCallId: "c-add",
      delta: '{"a":2,"b":3}',
    });
    expect(events.find((event) => event.type === "TOOL_CALL_RESULT")).toMatchObject({ content: "5" });
    const assistant = agent.messages.find((message) => message.role === "assistant") as {
      content?: string;
      toolCalls?: { id: string; function: { name: string; arguments: string } }[];
    };
    expect(assistant.content).toBe("Adding");
    expect(assistant.toolCalls?.[0]).toMatchObject({ id: "c-add", function: { name: "add" } });
    expect(agent.messages.find((message) => message.role === "tool")).toMatchObject({ toolCallId: "c-add" });
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", result: "It is 5" });
  });

  it("ends a failing run with RUN_ERROR after closing what it opened", async () => {
    const runtime = await agentFor([{ error: { type: "response", message: "bad key" } }]);
    const agent = httpAgent(lib, runtime, profile);
    agent.addMessage(userMessage("fail"));
    const { types, events } = await runOnce(lib, agent);
    expect(types[0]).toBe("RUN_STARTED");
    expect(types.at(-1)).toBe("RUN_ERROR");
    expect(types).not.toContain("RUN_FINISHED");
    expect(types.filter((type) => type === "STEP_STARTED").length).toBe(
      types.filter((type) => type === "STEP_FINISHED").length,
    );
    expect(events.at(-1)).toMatchObject({ message: expect.stringContaining("bad key") });
  });

  it("turns a call awaiting approval into an interrupt and resumes it with the client's approval", async () => {
    const runtime = await agentFor([
      { text: "I need approval", toolCalls: [toolCall("gated", { q: 7 }, "c-gated")] },
      { text: "Done" },
    ]);
    const agent = httpAgent(lib, runtime, profile);
    agent.addMessage(userMessage("go"));
    const paused = await runOnce(lib, agent);
    expect(paused.failures).toEqual([]);
    const finished = paused.events.at(-1) as unknown as {
      outcome: { type: string; interrupts: client10.Interrupt[] };
    };
    expect(finished.outcome.type).toBe("interrupt");
    expect(finished.outcome.interrupts).toHaveLength(1);
    const [interrupt] = finished.outcome.interrupts;
    expect(interrupt).toMatchObject({ reason: "tool_approval", toolCallId: "c-gated" });
    expect(interrupt?.metadata).toMatchObject({ keel: { toolId: "gated", params: { q: 7 } } });
    expect(agent.pendingInterrupts.map((pending) => pending.id)).toEqual([interrupt?.id]);
    // The client refuses a next run that leaves the interrupt unanswered.
    agent.addMessage(userMessage("ignore it"));
    await expect(agent.runAgent({})).rejects.toThrow(/pending interrupt/);

    const resumed = await runOnce(lib, agent, {
      resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { approved: true } }],
    });
    expect(resumed.failures).toEqual([]);
    // The call was announced by the paused run; the resumed one adds only its result.
    expect(resumed.types).not.toContain("TOOL_CALL_START");
    expect(resumed.events.find((event) => event.type === "TOOL_CALL_RESULT")).toMatchObject({
      toolCallId: "c-gated",
      content: "ran with 7",
    });
    expect(resumed.events.at(-1)).toMatchObject({ type: "RUN_FINISHED", result: "Done" });
    expect(agent.pendingInterrupts).toEqual([]);
    const run = await runtime.getRun(JSON.stringify(interrupt?.metadata).match(/"runId":"([^"]+)"/)![1]!);
    expect(run?.status).toBe("done");
  });

  it("resumes a denied interrupt: the call gets a denial and the run completes", async () => {
    const runtime = await agentFor([
      { toolCalls: [toolCall("gated", { q: 1 }, "c-deny")] },
      { text: "Understood, not running it" },
    ]);
    const agent = httpAgent(lib, runtime, profile);
    agent.addMessage(userMessage("go"));
    await runOnce(lib, agent);
    const [interrupt] = agent.pendingInterrupts;
    const resumed = await runOnce(lib, agent, {
      resume: [{ interruptId: interrupt!.id, status: "cancelled", payload: { reason: "not today" } }],
    });
    expect(resumed.failures).toEqual([]);
    const result = resumed.events.find((event) => event.type === "TOOL_CALL_RESULT");
    expect(String(result?.content)).toContain("not today");
    expect(resumed.events.at(-1)).toMatchObject({
      type: "RUN_FINISHED",
      result: "Understood, not running it",
    });
  });

  it.each([
    { shape: "the value itself", payload: "Paris", content: "Paris" },
    { shape: "{ result }", payload: { result: "Oslo" }, content: "Oslo" },
    { shape: "a boolean answer", payload: false, content: "false" },
    { shape: "an object answer", payload: { city: "Rome" }, content: '{"city":"Rome"}' },
  ])(
    "answers a call that asks for a value with $shape in the resume's payload",
    async ({ payload, content }) => {
      const runtime = await agentFor(
        [{ toolCalls: [toolCall("ask_city", {}, "c-ask")] }, { text: "Booked" }],
        [askCity],
      );
      const agent = httpAgent(lib, runtime, profile);
      agent.addMessage(userMessage("book a trip"));
      await runOnce(lib, agent);
      const [interrupt] = agent.pendingInterrupts;
      expect(interrupt).toMatchObject({
        reason: "tool_input",
        message: "Which city?",
        toolCallId: "c-ask",
        responseSchema: { type: "string" },
      });
      const resumed = await runOnce(lib, agent, {
        resume: [{ interruptId: interrupt!.id, status: "resolved", payload }],
      });
      expect(resumed.failures).toEqual([]);
      expect(resumed.events.find((event) => event.type === "TOOL_CALL_RESULT")).toMatchObject({
        toolCallId: "c-ask",
        content,
      });
      expect(resumed.events.at(-1)).toMatchObject({ type: "RUN_FINISHED", result: "Booked" });
    },
  );
});

describe("AG-UI endpoint", () => {
  it("serves 0.0.59 by default and 1.0 when asked, by query or header", async () => {
    const runtime = await agentFor([{ text: "a" }, { text: "b" }, { text: "c" }]);
    const app = createAgUiApp(runtime, { agentId: "a" });
    const body = JSON.stringify({
      threadId: "t",
      runId: "r",
      messages: [userMessage("x")],
      tools: [],
      context: [],
    });
    const started = async (url: string, headers: Record<string, string> = {}) => {
      const response = await app.fetch(new Request(url, { method: "POST", body, headers }));
      expect(response.headers.get("content-type")).toBe("text/event-stream");
      const text = await response.text();
      expect(text.endsWith("\n\n")).toBe(true);
      expect(text).not.toContain("\r");
      return JSON.parse(text.split("\n\n")[0]!.slice("data: ".length)) as Event;
    };
    expect((await started("http://k/")).protocolVersion).toBeUndefined();
    expect((await started("http://k/?protocol=1.0")).protocolVersion).toBe("1.0");
    expect((await started("http://k/", { "x-ag-ui-protocol": "1.0" })).protocolVersion).toBe("1.0");
  });

  it("answers bad requests with a 4xx and a JSON error, never a stream", async () => {
    const runtime = await agentFor([{ text: "a" }]);
    const app = createAgUiApp(runtime);
    const post = (path: string, body: string) =>
      app.fetch(
        new Request(`http://k${path}`, {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
        }),
      );
    const input = { threadId: "t", runId: "r", messages: [userMessage("x")] };
    const cases: [string, string, number][] = [
      ["/a", "{not json", 400],
      ["/a", JSON.stringify({ runId: "r", messages: [] }), 400],
      ["/a", JSON.stringify({ ...input, messages: [] }), 400],
      ["/nobody", JSON.stringify(input), 404],
      ["/", JSON.stringify(input), 404],
      ["/a?protocol=2.0", JSON.stringify(input), 400],
      ["/a", JSON.stringify({ ...input, resume: [{ interruptId: "zz", status: "resolved" }] }), 400],
      ["/a", JSON.stringify({ ...input, resume: [{ interruptId: "run:call", status: "resolved" }] }), 404],
      ["/a", JSON.stringify({ ...input, resume: [{ interruptId: "a:b", status: "maybe" }] }), 400],
    ];
    for (const [path, body, status] of cases) {
      const response = await post(path, body);
      expect({ path, body, status: response.status }).toEqual({ path, body, status });
      const json = (await response.json()) as { error: { code: string; hint?: string } };
      expect(json.error.code).toBeTypeOf("string");
    }
  });
});

describe("AG-UI replay", () => {
  async function replayed(app: ReturnType<typeof createAgUiApp>, runId: string): Promise<Event[]> {
    const response = await app.fetch(
      new Request(`http://k/runs/${encodeURIComponent(runId)}/events?protocol=1.0`),
    );
    expect(response.status).toBe(200);
    const frames = (await response.text()).split("\n\n").filter((frame) => frame !== "");
    return frames.map((frame) => JSON.parse(frame.slice("data: ".length)) as Event);
  }

  it("replays a run from its start, one AG-UI run per stretch, each closed, and stops while it waits", async () => {
    const runtime = await agentFor([
      { text: "Asking", toolCalls: [toolCall("gated", { q: 2 }, "c-r")] },
      { reasoning: "fine", text: "Done" },
    ]);
    const app = createAgUiApp(runtime);
    const agent = httpAgent(client10, runtime, "1.0");
    agent.addMessage(userMessage("go"));
    await runOnce(client10, agent);
    const [interrupt] = agent.pendingInterrupts;
    const keelRunId = (interrupt!.metadata as { keel: { runId: string } }).keel.runId;

    const waiting = await replayed(app, keelRunId);
    expect(waiting.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "interrupt" } });
    expect(waiting.filter((event) => event.type === "RUN_STARTED")).toHaveLength(1);

    await runOnce(client10, agent, { resume: [{ interruptId: interrupt!.id, status: "resolved" }] });
    const done = await replayed(app, keelRunId);
    expect(done.filter((event) => event.type === "RUN_STARTED")).toHaveLength(2);
    expect(done.at(-1)).toMatchObject({ type: "RUN_FINISHED", result: "Done" });
    for (const lib of [client10, client0059 as unknown as typeof client10]) {
      const verified = await lastValueFrom(
        from(done as unknown as client10.BaseEvent[]).pipe(lib.verifyEvents(false), toArray()),
      );
      expect(verified).toHaveLength(done.length);
    }
    expect((await app.fetch(new Request("http://k/runs/nope/events"))).status).toBe(404);
  });
});
