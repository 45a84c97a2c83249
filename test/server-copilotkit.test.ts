import type { AddressInfo } from "node:net";
import { ProxiedCopilotRuntimeAgent, ɵInterruptState } from "@copilotkit/core";
import { CopilotRuntime, createCopilotRuntimeHandler } from "@copilotkit/runtime/v2";
import { serve } from "@hono/node-server";
import { HttpAgent } from "ag-ui-client-0059";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineTool, type Runtime, SuspendToolCall } from "../src/index.js";
import { type KeelServer, serveKeel } from "../src/server/index.js";
import type { ScriptStep } from "../src/testing/index.js";
import { runtimeWith, toolCall } from "./support/harness.js";

// CopilotKit reports usage over the network unless told not to; the imports below would start it.
vi.hoisted(() => {
  process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";
});

type Event = { type: string; [key: string]: unknown };
type Interrupt = { id: string; reason: string; toolCallId?: string; metadata?: Record<string, unknown> };

const deleteFile = defineTool({
  name: "delete_file",
  description: "Deletes a file; a person approves each call",
  inputSchema: z.object({ path: z.string() }),
  approvalMode: "always",
  execute: ({ path }) => `deleted ${path}`,
});

/** Asks the person which city, and waits: the answer is the call's result. */
const askCity = defineTool({
  name: "ask_city",
  description: "Asks the user for a city",
  execute: () => {
    throw new SuspendToolCall({ reason: "Which city?", responseSchema: { type: "string" } });
  },
});

interface Stack {
  runtime: Runtime;
  keel: KeelServer;
  /** CopilotKit's runtime endpoint, e.g. http://127.0.0.1:1234/api/copilotkit */
  copilotUrl: string;
  close(): Promise<void>;
}

/** Keel on one port, and CopilotKit's runtime on another with Keel's AG-UI endpoint as its agent `keel`. */
async function startStack(
  options: { answer?: string; token?: readonly string[]; script?: ScriptStep[]; tools?: unknown[] } = {},
): Promise<Stack> {
  const answer = options.answer ?? "notes.txt is gone.";
  const { runtime } = await runtimeWith(
    options.script ?? [
      { text: "Deleting it.", toolCalls: [toolCall("delete_file", { path: "notes.txt" }, "call-1")] },
      { text: answer },
    ],
    { tools: options.tools ?? [deleteFile] },
  );
  const keel = await serveKeel(runtime, { port: 0, ...(options.token ? { token: options.token } : {}) });
  const copilot = new CopilotRuntime({ agents: { keel: new HttpAgent({ url: `${keel.url}/ag-ui/a` }) } });
  const handler = createCopilotRuntimeHandler({ runtime: copilot, basePath: "/api/copilotkit" });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch: handler, port: 0, hostname: "127.0.0.1" }, () => resolve(started));
  });
  const { port } = server.address() as AddressInfo;
  return {
    runtime,
    keel,
    copilotUrl: `http://127.0.0.1:${port}/api/copilotkit`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await keel.close();
      await runtime.close();
    },
  };
}

/** The AG-UI events of an SSE body, as CopilotKit sends them (`data: <json>` frames). */
function sseEvents(text: string): Event[] {
  return text
    .split("\n\n")
    .flatMap((frame) => frame.split("\n").filter((line) => line.startsWith("data:")))
    .map((line) => JSON.parse(line.slice(5)) as Event);
}

/** The agent a CopilotKit page holds for `keel`: it asks /info first, then runs through /agent/keel/run. */
function pageAgent(copilotUrl: string, threadId: string, headers: Record<string, string> = {}) {
  const agent = new ProxiedCopilotRuntimeAgent({ runtimeUrl: copilotUrl, agentId: "keel", headers });
  agent.threadId = threadId;
  return agent;
}

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe("CopilotKit's runtime in front of Keel's AG-UI endpoint", () => {
  it("lists Keel's agent at /info", async () => {
    stack = await startStack();
    const response = await fetch(`${stack.copilotUrl}/info`);
    expect(response.status).toBe(200);
    const info = (await response.json()) as { agents: Record<string, unknown>; mode: string };
    expect(Object.keys(info.agents)).toEqual(["keel"]);
    expect(info.mode).toBe("sse");
  });

  it("carries a tool approval as an interrupt in its run stream; a run with a resume approves it", async () => {
    stack = await startStack();
    const run = (extra: Record<string, unknown>) =>
      fetch(`${stack!.copilotUrl}/agent/keel/run`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({
          threadId: "thread-1",
          messages: [{ id: "u1", role: "user", content: "delete notes.txt" }],
          tools: [],
          context: [],
          state: {},
          forwardedProps: {},
          ...extra,
        }),
      });
    const first = await run({ runId: "run-1" });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("text/event-stream");
    const paused = sseEvents(await first.text());
    expect(paused.map((event) => event.type)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "STEP_FINISHED",
      "RUN_FINISHED",
    ]);
    const finished = paused.at(-1) as unknown as { outcome: { type: string; interrupts: Interrupt[] } };
    expect(finished.outcome.type).toBe("interrupt");
    const [interrupt] = finished.outcome.interrupts;
    expect(interrupt).toMatchObject({ reason: "tool_approval", toolCallId: "call-1" });
    // Nothing ran: the call waits for the person.
    expect(paused.some((event) => event.type === "TOOL_CALL_RESULT")).toBe(false);

    const second = await run({
      runId: "run-2",
      resume: [{ interruptId: interrupt!.id, status: "resolved", payload: { approved: true } }],
    });
    expect(second.status).toBe(200);
    const resumed = sseEvents(await second.text());
    expect(resumed[0]).toMatchObject({ type: "RUN_STARTED", threadId: "thread-1", runId: "run-2" });
    expect(resumed.find((event) => event.type === "TOOL_CALL_RESULT")).toMatchObject({
      toolCallId: "call-1",
      content: "deleted notes.txt",
    });
    expect(textOf(resumed)).toBe("notes.txt is gone.");
    expect(resumed.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } });
    const keelRunId = (interrupt!.metadata as { keel: { runId: string } }).keel.runId;
    expect(await stack.runtime.getRun(keelRunId)).toMatchObject({ status: "done" });
  });

  it.each([
    { answer: "approve", final: "notes.txt is gone.", result: "deleted notes.txt" },
    { answer: "cancel", final: "I left notes.txt alone.", result: expect.stringContaining("denied") },
  ])(
    "round trip from CopilotKit's browser client, answered with $answer as useInterrupt does",
    async ({ answer, final, result }) => {
      stack = await startStack({ answer: final });
      // The agent a CopilotKit page holds for `keel`: it asks /info first, then runs through /agent/keel/run.
      const agent = new ProxiedCopilotRuntimeAgent({ runtimeUrl: stack.copilotUrl, agentId: "keel" });
      agent.threadId = "thread-2";
      const interrupts: Interrupt[] = [];
      const subscription = agent.subscribe({
        onRunFinishedEvent: (params: { outcome?: string; interrupts?: Interrupt[] }) => {
          if (params.outcome === "interrupt") interrupts.push(...(params.interrupts ?? []));
        },
      });
      agent.addMessage({ id: "u1", role: "user", content: "delete notes.txt" });
      await agent.runAgent();
      expect(interrupts).toHaveLength(1);
      expect(agent.pendingInterrupts.map((pending) => pending.id)).toEqual([interrupts[0]!.id]);

      // useInterrupt's bookkeeping: the open interrupts, the person's answer, then the resume it sends.
      const state = new ɵInterruptState();
      state.setStandard(interrupts);
      const decision = answer === "approve" ? state.resolve({ approved: true }) : state.cancel();
      if (decision.kind !== "resume") throw new Error(`useInterrupt would not resume: ${decision.kind}`);
      for (const toolResult of decision.toolResults)
        agent.addMessage({ id: `t-${toolResult.toolCallId}`, role: "tool", ...toolResult });
      const events: Event[] = [];
      await agent.runAgent(
        { resume: decision.resume },
        { onEvent: ({ event }) => void events.push(event as Event) },
      );
      subscription.unsubscribe();

      expect(events.find((event) => event.type === "TOOL_CALL_RESULT")).toMatchObject({
        toolCallId: "call-1",
        content: result,
      });
      expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } });
      expect(agent.pendingInterrupts).toEqual([]);
      const last = agent.messages.at(-1) as { role: string; content: string };
      expect(last).toMatchObject({ role: "assistant", content: final });
    },
  );

  it("takes the value a person gives with useInterrupt's resolve(value) as a question's answer", async () => {
    stack = await startStack({
      script: [{ toolCalls: [toolCall("ask_city", {}, "ask-1")] }, { text: "Booked for Paris." }],
      tools: [askCity],
    });
    const agent = pageAgent(stack.copilotUrl, "thread-3");
    agent.addMessage({ id: "u1", role: "user", content: "book a trip" });
    await agent.runAgent();
    const [interrupt] = agent.pendingInterrupts;
    expect(interrupt).toMatchObject({ reason: "tool_input", message: "Which city?" });
    const state = new ɵInterruptState();
    state.setStandard([interrupt!]);
    const decision = state.resolve("Paris");
    if (decision.kind !== "resume") throw new Error(`useInterrupt would not resume: ${decision.kind}`);
    const events: Event[] = [];
    await agent.runAgent(
      { resume: decision.resume },
      { onEvent: ({ event }) => void events.push(event as Event) },
    );
    expect(events.find((event) => event.type === "TOOL_CALL_RESULT")).toMatchObject({
      toolCallId: "ask-1",
      content: "Paris",
    });
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", content: "Booked for Paris." });
  });

  it("passes the page's bearer token on to Keel: each token's interrupts stay its own", async () => {
    stack = await startStack({ token: ["token-a", "token-b"] });
    const a = pageAgent(stack.copilotUrl, "shared", { authorization: "Bearer token-a" });
    a.addMessage({ id: "u1", role: "user", content: "delete notes.txt" });
    await a.runAgent();
    const [interrupt] = a.pendingInterrupts;
    expect(interrupt?.reason).toBe("tool_approval");
    const keelRunId = (interrupt!.metadata as { keel: { runId: string } }).keel.runId;

    // Another tenant answering A's interrupt is told of no such run, and the run still waits.
    const b = pageAgent(stack.copilotUrl, "shared", { authorization: "Bearer token-b" });
    const seen: Event[] = [];
    // CopilotKit logs the agent's failure to the console as well; the page sees it as RUN_ERROR.
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    await b.runAgent(
      { resume: [{ interruptId: interrupt!.id, status: "resolved" }] },
      { onEvent: ({ event }) => void seen.push(event as Event) },
    );
    logged.mockRestore();
    expect(seen.map((event) => event.type)).toEqual(["RUN_ERROR"]);
    expect(seen[0]?.message).toContain("HTTP 404");
    expect(await stack.runtime.getRun(keelRunId)).toMatchObject({ status: "waiting" });

    await a.runAgent({ resume: [{ interruptId: interrupt!.id, status: "resolved" }] });
    expect(a.messages.at(-1)).toMatchObject({ role: "assistant", content: "notes.txt is gone." });
    expect(await stack.runtime.getRun(keelRunId)).toMatchObject({ status: "done" });
  });
});

function textOf(events: readonly Event[]): string {
  return events
    .filter((event) => event.type === "TEXT_MESSAGE_CONTENT")
    .map((event) => event.delta)
    .join("");
}
