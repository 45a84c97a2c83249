import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from "ai";
import {
  AbstractChat as AbstractChatV5,
  DefaultChatTransport as DefaultChatTransportV5,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage as UIMessageV5,
} from "ai5";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Message, type Runtime } from "../src/index.js";
import { createUiMessageStreamApp } from "../src/server/ui-message-stream/index.js";
import { deferred } from "./support/harness.js";
import { chatRuntime, messageOf, readChunks } from "./support/ui-message-client.js";

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** The state a framework binding (React's `useChat`) keeps; here plain fields. */
class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((old, at) => (at === index ? message : old));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** `useChat` without React: the AI SDK's own chat class, its default transport, and a fetch into the app. */
class NodeChat extends AbstractChat<UIMessage> {
  constructor(app: { fetch: (request: Request) => Response | Promise<Response> }, id: string) {
    super({
      id,
      state: new PlainChatState(),
      transport: new DefaultChatTransport({
        api: "http://keel.test/a/chat",
        fetch: (input, init) => Promise.resolve(app.fetch(new Request(input as string, init))),
      }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
  }
}

function plainText(message: Message): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return content.map((part) => ("text" in part ? part.text : "")).join("");
}

const roleAndText = (message: UIMessage) =>
  `${message.role}: ${message.parts.map((part) => (part.type === "text" ? part.text : "")).join("")}`;

/** What `regenerate()` posts, written out: the messages up to the question, and the answer's id when named. */
function regeneratePost(chatId: string, questions: readonly string[], messageId?: string): Request {
  return new Request("http://keel.test/a/chat", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      id: chatId,
      trigger: "regenerate-message",
      ...(messageId === undefined ? {} : { messageId }),
      messages: questions.map((text, at) => ({
        id: `u${at}`,
        role: "user",
        parts: [{ type: "text", text }],
      })),
    }),
  });
}

type ToolPart = { type: string; state: string; approval?: { id: string }; output?: unknown };
const lastToolPart = (chat: NodeChat) =>
  chat.messages
    .at(-1)!
    .parts.filter((part) => part.type.startsWith("tool-"))
    .at(-1) as ToolPart | undefined;

async function settled(chat: NodeChat, until: () => boolean): Promise<void> {
  for (let turn = 0; turn < 500 && !(chat.status === "ready" && until()); turn++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The same for an AI SDK 5 page. */
class NodeChatV5 extends AbstractChatV5<UIMessageV5> {}

describe("useChat against the app", () => {
  it("sends a message, is asked for approval, approves, and the run completes in the same message", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/tmp/x" } }] },
      { deltas: ["Wiped", " it."] },
    ]);
    const app = createUiMessageStreamApp(runtime);
    const chat = new NodeChat(app, "chat-uc");
    await chat.sendMessage({ text: "wipe /tmp/x" });
    expect(chat.error).toBeUndefined();
    expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    const asked = lastToolPart(chat)!;
    expect(asked).toMatchObject({ type: "tool-wipe", state: "approval-requested" });

    await chat.addToolApprovalResponse({ id: asked.approval!.id, approved: true });
    await settled(chat, () => lastToolPart(chat)?.state === "output-available");
    expect(chat.error).toBeUndefined();
    expect(chat.messages.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(lastToolPart(chat)).toMatchObject({ state: "output-available", output: "wiped /tmp/x" });
    const text = chat.messages[1]!.parts.filter((part) => part.type === "text").map(
      (part) => (part as { text: string }).text,
    );
    expect(text.join("")).toBe("Wiped it.");
    const runs = await runtime.listRuns({ sessionId: "chat-uc" });
    expect(runs.map((run) => [run.status, run.stopReason])).toEqual([["done", "completed"]]);
  });

  it("regenerates the last answer: the run starts again from the transcript before it", async () => {
    const seen: string[][] = [];
    // The scripted model picks its turn by the transcript's assistant turns, so a regenerated answer would get
    // the same turn again: each call here answers with the next word instead.
    const words = ["one", "two", "three", "four", "five"];
    const answer = (request: { messages: readonly Message[] }) => {
      seen.push(request.messages.map((message) => `${message.role}: ${plainText(message)}`));
      return { text: words[seen.length - 1]! };
    };
    runtime = await chatRuntime([answer, answer, answer]);
    const app = createUiMessageStreamApp(runtime);
    const chat = new NodeChat(app, "chat-re");
    await chat.sendMessage({ text: "first" });
    await chat.sendMessage({ text: "second" });
    const replaced = chat.messages.at(-1)!.id;

    // regenerate() with no id: the last answer.
    await chat.regenerate();
    expect(chat.error).toBeUndefined();
    expect(chat.messages.map(roleAndText)).toEqual([
      "user: first",
      "assistant: one",
      "user: second",
      "assistant: three",
    ]);
    expect(chat.messages.at(-1)!.id).not.toBe(replaced);
    // The model saw what it saw when it wrote "two": not "two" itself.
    expect(seen[2]).toEqual(seen[1]);

    // regenerate({ messageId }): the client names the answer (Keel makes it the run's id).
    await chat.regenerate({ messageId: chat.messages.at(-1)!.id });
    expect(chat.error).toBeUndefined();
    expect(chat.messages.map(roleAndText).at(-1)).toBe("assistant: four");
    expect(seen[3]).toEqual(seen[1]);

    // The conversation goes on without the answers it replaced.
    await chat.sendMessage({ text: "third" });
    expect(seen[4]).toEqual([
      "user: first",
      "assistant: one",
      "user: second",
      "assistant: four",
      "user: third",
    ]);

    // A reload finds the chat where it goes on: nothing runs, so the resume GET has nothing to stream.
    const transport = new DefaultChatTransport({
      api: "http://keel.test/a/chat",
      fetch: (input, init) => Promise.resolve(app.fetch(new Request(input as string, init))),
    });
    expect(await transport.reconnectToStream({ chatId: "chat-re" })).toBeNull();
  });

  it("refuses to regenerate an earlier answer, or one whose run still waits for approval", async () => {
    runtime = await chatRuntime([
      { text: "one" },
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/tmp/x" } }] },
      { text: "wiped" },
    ]);
    const app = createUiMessageStreamApp(runtime);
    const chat = new NodeChat(app, "chat-refused");
    await chat.sendMessage({ text: "first" });
    const first = chat.messages.at(-1)!.id;
    await chat.sendMessage({ text: "wipe /tmp/x" });
    expect(lastToolPart(chat)).toMatchObject({ state: "approval-requested" });

    const waiting = await app.fetch(regeneratePost("chat-refused", ["first", "wipe /tmp/x"]));
    expect(waiting.status).toBe(409);
    expect(await waiting.json()).toMatchObject({ error: { hint: expect.stringContaining("Answer") } });
    const earlier = await app.fetch(regeneratePost("chat-refused", ["first"], first));
    expect(earlier.status).toBe(409);
    const unknown = await app.fetch(regeneratePost("chat-refused", ["first"], "no-such-run"));
    expect(unknown.status).toBe(404);
  });

  it("resumes a run in flight through the transport's reconnect, and gets 204 when nothing runs", async () => {
    const gate = deferred();
    const slow = defineTool({
      name: "slow",
      description: "Waits until the test lets it finish",
      inputSchema: z.object({}),
      execute: async () => {
        await gate.promise;
        return "slept";
      },
    });
    runtime = await chatRuntime(
      [{ toolCalls: [{ id: "s1", name: "slow", arguments: {} }] }, { text: "awake" }],
      [slow],
    );
    const app = createUiMessageStreamApp(runtime, { agentId: "a" });
    const transport = new DefaultChatTransport({
      api: "http://keel.test/chat",
      fetch: (input, init) => Promise.resolve(app.fetch(new Request(input as string, init))),
    });
    expect(await transport.reconnectToStream({ chatId: "quiet" })).toBeNull();

    const posted = await app.fetch(
      new Request("http://keel.test/chat", {
        method: "POST",
        body: JSON.stringify({
          id: "busy",
          messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "go" }] }],
        }),
      }),
    );
    // The first client leaves at once; the run goes on.
    await posted.body?.cancel();
    const resumed = await transport.reconnectToStream({ chatId: "busy" });
    expect(resumed).not.toBeNull();
    gate.resolve();
    const chunks = [];
    for await (const chunk of resumed!) chunks.push(chunk);
    const { message, errors } = await messageOf(chunks);
    expect(errors).toEqual([]);
    expect(message.parts.filter((part) => part.type === "tool-slow")).toMatchObject([
      { state: "output-available", output: "slept" },
    ]);
    expect(
      message.parts.some((part) => part.type === "text" && (part as { text: string }).text === "awake"),
    ).toBe(true);
    expect(await transport.reconnectToStream({ chatId: "busy" })).toBeNull();
  });

  it("re-attaches to a run continued after an approval, rebuilding the whole message from its start", async () => {
    const gate = deferred();
    const gatedWipe = defineTool({
      name: "wipe",
      description: "Wipes once the test lets it",
      inputSchema: z.object({ path: z.string() }),
      approvalMode: "always",
      execute: async ({ path }: { path: string }) => {
        await gate.promise;
        return `wiped ${path}`;
      },
    });
    runtime = await chatRuntime(
      [{ toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/z" } }] }, { text: "gone" }],
      [gatedWipe],
    );
    const app = createUiMessageStreamApp(runtime, { agentId: "a" });
    const user = { id: "u", role: "user" as const, parts: [{ type: "text" as const, text: "wipe /z" }] };
    const post = (messages: unknown[]) =>
      app.fetch(
        new Request("http://keel.test/chat", {
          method: "POST",
          body: JSON.stringify({ id: "cont", messages }),
        }),
      );
    const asked = await messageOf(await readChunks(await post([user])));
    expect((await app.fetch(new Request("http://keel.test/chat/cont/stream"))).status).toBe(204);
    const part = asked.message.parts.find((each) => each.type === "tool-wipe") as ToolPart;
    const answered = {
      ...asked.message,
      parts: asked.message.parts.map((each) =>
        each === (part as unknown)
          ? { ...each, state: "approval-responded", approval: { id: part.approval!.id, approved: true } }
          : each,
      ),
    };
    const continued = await post([user, answered]);
    expect(continued.status).toBe(200);
    await continued.body?.cancel();

    const resumed = await app.fetch(new Request("http://keel.test/chat/cont/stream"));
    expect(resumed.status).toBe(200);
    gate.resolve();
    const { message, errors } = await messageOf(await readChunks(resumed));
    expect(errors).toEqual([]);
    expect(message.id).toBe(asked.message.id);
    expect(message.parts.filter((each) => each.type === "tool-wipe")).toMatchObject([
      { state: "output-available", output: "wiped /z" },
    ]);
    expect(
      message.parts.some((each) => each.type === "text" && (each as { text: string }).text === "gone"),
    ).toBe(true);
  });

  it("serves an AI SDK 5 transport with chunks the v5 schema accepts, approving through a tool output", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "c1", name: "add", arguments: { a: 2, b: 2 } }] },
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/y" } }] },
      { text: "all done" },
    ]);
    const app = createUiMessageStreamApp(runtime, { agentId: "a", profile: "v5" });
    const user = { id: "u1", role: "user" as const, parts: [{ type: "text" as const, text: "go" }] };
    const transport = new DefaultChatTransportV5({
      api: "http://keel.test/chat",
      fetch: (input, init) => Promise.resolve(app.fetch(new Request(input as string, init))),
    });
    const stream = await transport.sendMessages({
      chatId: "v5",
      messages: [user],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const first = [];
    for await (const chunk of stream) first.push(chunk);
    expect(first.map((chunk) => chunk.type)).not.toContain("tool-approval-request");
    expect(first.at(-1)).toEqual({ type: "finish" });
    // The transport parsed with its own schema; the v5 schema is applied again explicitly to a fresh chat.
    expect((await app.fetch(new Request("http://keel.test/chat/v5/stream"))).status).toBe(204);
    const again = await readChunks(
      await app.fetch(
        new Request("http://keel.test/a/chat?profile=v5", {
          method: "POST",
          body: JSON.stringify({ id: "v5-check", messages: [user] }),
        }),
      ),
      "v5",
    );
    expect(again.at(-1)).toEqual({ type: "finish" });

    const { message } = await messageOf(first as never);
    const wipe = message.parts.find((part) => part.type === "tool-wipe") as ToolPart & { toolCallId: string };
    expect(wipe.state).toBe("input-available");
    const answered = {
      ...message,
      parts: message.parts.map((part) =>
        part === (wipe as unknown)
          ? { ...part, state: "output-available", output: { approved: true } }
          : part,
      ),
    };
    const rest = await readChunks(
      await app.fetch(
        new Request("http://keel.test/chat", {
          method: "POST",
          body: JSON.stringify({ id: "v5", messages: [user, answered] }),
        }),
      ),
      "v5",
    );
    expect(rest).toContainEqual({ type: "tool-output-available", toolCallId: "w1", output: "wiped /y" });
    expect((await runtime.listRuns({ sessionId: "v5" })).map((run) => run.stopReason)).toEqual(["completed"]);
  });

  it("lets an AI SDK 5 chat answer the waiting call with addToolResult and send automatically", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/v5" } }] },
      { text: "v5 done" },
    ]);
    const app = createUiMessageStreamApp(runtime, { agentId: "a", profile: "v5" });
    const chat = new NodeChatV5({
      id: "chat-v5",
      state: new PlainChatState() as never,
      transport: new DefaultChatTransportV5({
        api: "http://keel.test/chat",
        fetch: (input, init) => Promise.resolve(app.fetch(new Request(input as string, init))),
      }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    });
    await chat.sendMessage({ text: "wipe /v5" });
    expect(chat.error).toBeUndefined();
    const waiting = chat.messages.at(-1)!.parts.find((part) => part.type === "tool-wipe") as ToolPart & {
      toolCallId: string;
    };
    expect(waiting.state).toBe("input-available");

    await chat.addToolResult({
      tool: "wipe",
      toolCallId: waiting.toolCallId,
      output: { approved: true },
    } as never);
    const wiped = () =>
      chat.messages
        .at(-1)!
        .parts.some((part) => part.type === "text" && (part as { text: string }).text === "v5 done");
    for (let turn = 0; turn < 500 && !(chat.status === "ready" && wiped()); turn++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(chat.error).toBeUndefined();
    expect(wiped()).toBe(true);
    expect((await runtime.listRuns({ sessionId: "chat-v5" })).map((run) => run.stopReason)).toEqual([
      "completed",
    ]);
  });
});
