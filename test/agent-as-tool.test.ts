import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Message, Runtime } from "../src/index.js";
import { scriptedModel } from "../src/testing/index.js";

/** Agent as tool: input, result, kwargs, sessions shared only when asked, suspension forwarded. */

const seen: { kwargs: unknown[]; sessions: string[] } = { kwargs: [], sessions: [] };

const note = defineTool({
  name: "note",
  description: "Write a note into the session state",
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }, ctx) => {
    seen.kwargs.push(ctx.kwargs);
    seen.sessions.push(ctx.sessionId);
    ctx.session.state.note = text;
    return "noted";
  },
});

const approve = defineTool({
  name: "publish",
  description: "Publish (needs approval)",
  inputSchema: z.object({}),
  approvalMode: "always",
  execute: () => "published",
});

/** The child answers after one `note` call (or a `publish` call, when asked to publish). */
function childModel() {
  return scriptedModel(
    [
      (request) => {
        const last = request.messages.at(-1) as Message;
        if (last.role === "tool") return { text: `child done (${last.content})` };
        const wantsPublish = String(last.content).includes("publish");
        return {
          toolCalls: [
            wantsPublish
              ? { id: "k1", name: "publish", arguments: {} }
              : { id: "k1", name: "note", arguments: { text: String(last.content) } },
          ],
        };
      },
    ],
    { whenExhausted: "repeat-last" },
  );
}

function parentModel(task: string) {
  return scriptedModel(
    [
      (request) =>
        request.messages.at(-1)?.role === "tool"
          ? { text: `parent got: ${request.messages.at(-1)!.content}` }
          : { toolCalls: [{ id: "h1", name: "helper", arguments: { task } }] },
    ],
    { whenExhausted: "repeat-last" },
  );
}

async function runtimeFor(task: string, config: Record<string, unknown> = {}) {
  const parent = parentModel(task);
  const runtime = await Runtime.fromDict({
    agents: [
      {
        id: "boss",
        name: "Boss",
        llm: parent,
        tools: [{ id: "helper", type: "agent", config: { agent_id: "worker", ...config } }],
      },
      { id: "worker", name: "Worker", llm: childModel(), tools: [note, approve] },
    ],
  });
  return { runtime, parent };
}

describe("agent as tool", () => {
  it("runs the child with the task, returns its final text, and shows the model one string argument", async () => {
    const { runtime, parent } = await runtimeFor("remember milk");
    const result = await runtime.runDetailed({
      agentId: "boss",
      inputText: "delegate",
      runId: "p1",
      functionInvocationKwargs: { tenant: "acme" },
    });
    expect(result).toMatchObject({ stopReason: "completed", finalOutput: "parent got: child done (noted)" });
    expect(parent.requests[0]!.tools).toEqual([
      {
        name: "helper",
        description: "Ask the agent 'worker' to carry out a task",
        inputSchema: {
          type: "object",
          properties: { task: { type: "string", description: "What the agent should do, in plain words" } },
          required: ["task"],
          additionalProperties: false,
        },
      },
    ]);
    const child = await runtime.getRun("p1:h1");
    expect(child).toMatchObject({
      agentId: "worker",
      parentRunId: "p1",
      status: "done",
      stopReason: "completed",
    });
    expect(seen.kwargs.at(-1)).toEqual({ tenant: "acme" });
  });

  it("gives the child a fresh session unless asked to share the parent's", async () => {
    const isolated = await runtimeFor("isolated note");
    const first = await isolated.runtime.runDetailed({
      agentId: "boss",
      inputText: "go",
      sessionId: "parent-s",
    });
    expect(first.stopReason).toBe("completed");
    expect(seen.sessions.at(-1)).not.toBe("parent-s");
    expect(await isolated.runtime.sessionManager.getState("parent-s")).not.toHaveProperty("note");

    const shared = await runtimeFor("shared note", { propagate_session: true });
    const second = await shared.runtime.runDetailed({
      agentId: "boss",
      inputText: "go",
      sessionId: "parent-s",
    });
    expect(second.stopReason).toBe("completed");
    expect(seen.sessions.at(-1)).toBe("parent-s");
    expect(await shared.runtime.sessionManager.getState("parent-s")).toMatchObject({ note: "shared note" });
  });

  it("suspends the parent's call when the child suspends, and forwards the decision", async () => {
    const { runtime } = await runtimeFor("please publish");
    const suspended = await runtime.runDetailed({ agentId: "boss", inputText: "go", runId: "p3" });
    expect(suspended.stopReason).toBe("suspended");
    expect(suspended.pendingToolCalls).toEqual([
      expect.objectContaining({
        toolCallId: "h1",
        toolId: "helper",
        reason: "Agent 'worker' waits for a decision on publish (k1)",
      }),
    ]);
    expect(await runtime.getRun("p3:h1")).toMatchObject({ status: "waiting" });
    const done = await runtime.decide({ runId: "p3", decisions: [{ toolCallId: "h1", action: "approve" }] });
    expect(done).toMatchObject({
      stopReason: "completed",
      finalOutput: "parent got: child done (published)",
    });
    expect(await runtime.getRun("p3:h1")).toMatchObject({ status: "done", stopReason: "completed" });
  });

  it("wraps an agent of another runtime with runtime.agentAsTool()", async () => {
    const workers = await Runtime.fromDict({
      agents: [{ id: "worker", name: "Worker", llm: childModel(), tools: [note] }],
    });
    const helper = workers.agentAsTool("worker", { name: "helper", argName: "job", description: "A worker" });
    expect(helper.schema()).toMatchObject({ required: ["job"] });
    const boss = await Runtime.fromDict({
      agents: [
        {
          id: "boss",
          name: "Boss",
          tools: [helper],
          llm: scriptedModel([
            { toolCalls: [{ id: "h1", name: "helper", arguments: { job: "write it" } }] },
            { text: "ok" },
          ]),
        },
      ],
    });
    const result = await boss.runDetailed({ agentId: "boss", inputText: "go", runId: "x1" });
    expect(result.stopReason).toBe("completed");
    expect(await workers.getRun("x1:h1")).toMatchObject({
      agentId: "worker",
      parentRunId: "x1",
      stopReason: "completed",
    });
  });

  it("is refused by the model's arguments when the task is missing", async () => {
    const runtime = await Runtime.fromDict({
      agents: [
        {
          id: "boss",
          name: "Boss",
          llm: scriptedModel([
            { toolCalls: [{ id: "h1", name: "helper", arguments: { wrong: 1 } }] },
            { text: "ok" },
          ]),
          tools: [{ id: "helper", type: "agent", config: { agent_id: "worker" } }],
        },
        { id: "worker", name: "Worker", llm: childModel(), tools: [note] },
      ],
    });
    const result = await runtime.runDetailed({ agentId: "boss", inputText: "go", sessionId: "v" });
    const messages = await runtime.sessionManager.loadMessages("v");
    expect(result.stopReason).toBe("completed");
    expect(messages.find((m) => m.role === "tool")?.content).toContain("'task' must be a non-empty string");
  });

  it("refuses an unknown key in the agent tool's config", async () => {
    await expect(
      Runtime.fromDict({
        agents: [
          {
            id: "boss",
            name: "Boss",
            llm: scriptedModel([{ text: "x" }]),
            tools: [{ id: "helper", type: "agent", config: { agent_id: "worker", agnet: 1 } }],
          },
        ],
      }).then((runtime) => runtime.runDetailed({ agentId: "boss", inputText: "go" })),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^plugin\./) });
  });
});
