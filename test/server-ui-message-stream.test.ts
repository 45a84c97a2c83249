import type { UIMessage } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import type { Runtime } from "../src/index.js";
import { createKeelHandler } from "../src/server/index.js";
import {
  answerApproval,
  chatPost,
  chatRuntime,
  messageOf,
  readChunks,
  userMessage,
} from "./support/ui-message-client.js";

// The AI SDK UI message stream as the Keel server serves it: at /ui, behind the bearer tokens.
let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** The id of the first approval the message asks for. */
function approvalId(message: UIMessage): string {
  const part = message.parts.find((candidate) => candidate.type.startsWith("tool-")) as
    | { approval?: { id: string } }
    | undefined;
  return part!.approval!.id;
}

function as(handler: (request: Request) => Promise<Response>, token: string, request: Request) {
  request.headers.set("authorization", `Bearer ${token}`);
  return handler(request);
}

describe("the server's UI message stream", () => {
  it("keeps each tenant's chats its own: another tenant cannot answer an approval; the owner can", async () => {
    runtime = await chatRuntime([
      { toolCalls: [{ id: "w1", name: "wipe", arguments: { path: "/x" } }] },
      { text: "done" },
    ]);
    const handler = createKeelHandler(runtime, { token: ["token-a", "token-b"] });
    expect((await handler(chatPost({ id: "c", messages: [userMessage("x")] }, "/ui/a/chat"))).status).toBe(
      401,
    );
    const user = userMessage("wipe");
    const asked = await messageOf(
      await readChunks(
        await as(handler, "token-a", chatPost({ id: "shared", messages: [user] }, "/ui/a/chat")),
      ),
    );
    const [run] = await runtime.listRuns();
    expect(run?.sessionId.endsWith("~shared")).toBe(true);
    expect(run?.status).toBe("waiting");
    const answered = answerApproval(asked.message, {
      id: approvalId(asked.message),
      approved: true,
    });
    const post = () => chatPost({ id: "shared", messages: [user, answered] }, "/ui/a/chat");
    expect((await as(handler, "token-b", post())).status).toBe(404);
    expect((await runtime.getRun(run!.runId))?.status).toBe("waiting");
    const rest = await readChunks(await as(handler, "token-a", post()));
    expect(rest.at(-1)).toEqual({ type: "finish", finishReason: "stop" });
  });

  it("regenerates a chat's last answer inside its tenant; another tenant's chat of the same id has none", async () => {
    let calls = 0;
    runtime = await chatRuntime([
      () => ({ text: `answer ${++calls}` }),
      () => ({ text: `answer ${++calls}` }),
    ]);
    const handler = createKeelHandler(runtime, { token: ["token-a", "token-b"] });
    const question = userMessage("q");
    await readChunks(
      await as(handler, "token-a", chatPost({ id: "shared", messages: [question] }, "/ui/a/chat")),
    );
    const regenerate = () =>
      chatPost({ id: "shared", messages: [question], trigger: "regenerate-message" }, "/ui/a/chat");
    expect((await as(handler, "token-b", regenerate())).status).toBe(409);
    const again = await messageOf(await readChunks(await as(handler, "token-a", regenerate())));
    expect(again.message.parts.filter((part) => part.type === "text")).toMatchObject([{ text: "answer 2" }]);
    const sessions = (await runtime.listRuns()).map((run) => run.sessionId);
    const tenantA = sessions[0]!.slice(0, sessions[0]!.indexOf("~") + 1);
    expect(sessions).toHaveLength(2);
    expect(sessions.every((session) => session.startsWith(tenantA))).toBe(true);
  });

  it("can be left out", async () => {
    runtime = await chatRuntime([]);
    const handler = createKeelHandler(runtime, { uiMessageStream: false });
    expect((await handler(chatPost({ id: "c", messages: [userMessage("x")] }, "/ui/a/chat"))).status).toBe(
      404,
    );
  });
});
