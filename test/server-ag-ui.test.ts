import * as client from "@ag-ui/client";
import { describe, expect, it } from "vitest";
import { defineTool } from "../src/index.js";
import { createKeelHandler } from "../src/server/index.js";
import { runtimeWith, toolCall } from "./support/harness.js";

// The AG-UI endpoint as the Keel server serves it: behind the bearer tokens, each tenant's threads its own.
const gated = defineTool({
  name: "gated",
  description: "Needs a human's approval",
  approvalMode: "always",
  execute: () => "ran",
});

function agentOf(handler: (request: Request) => Promise<Response>, token: string, threadId: string) {
  return new client.HttpAgent({
    url: "http://keel.test/ag-ui/a",
    threadId,
    headers: { authorization: `Bearer ${token}` },
    fetch: (url: string | URL | Request, init?: RequestInit) => handler(new Request(url, init)),
  } as ConstructorParameters<typeof client.HttpAgent>[0]);
}

describe("the server's AG-UI endpoint", () => {
  it("keeps each tenant's threads and interrupts its own; the owner resumes", async () => {
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("gated", {}, "c1")] }, { text: "Done" }], {
      tools: [gated],
    });
    const handler = createKeelHandler(runtime, { token: ["token-a", "token-b"] });
    const a = agentOf(handler, "token-a", "shared-name");
    a.addMessage({ id: "u1", role: "user", content: "go" });
    await a.runAgent({});
    const [interrupt] = a.pendingInterrupts;
    expect(interrupt?.id).toBeDefined();

    // Tenant B answers A's interrupt, and asks to replay A's run: both are unknown to it.
    const resume = {
      threadId: "shared-name",
      runId: "r2",
      messages: [],
      tools: [],
      context: [],
      state: {},
      forwardedProps: {},
      resume: [{ interruptId: interrupt!.id, status: "resolved" }],
    };
    const asB = await handler(
      new Request("http://keel.test/ag-ui/a", {
        method: "POST",
        headers: { authorization: "Bearer token-b", "content-type": "application/json" },
        body: JSON.stringify(resume),
      }),
    );
    expect(asB.status).toBe(404);
    const keelRunId = (interrupt!.metadata as { keel: { runId: string } }).keel.runId;
    const replay = await handler(
      new Request(`http://keel.test/ag-ui/runs/${encodeURIComponent(keelRunId)}/events`, {
        headers: { authorization: "Bearer token-b" },
      }),
    );
    expect(replay.status).toBe(404);
    expect(await runtime.getRun(keelRunId)).toMatchObject({ status: "waiting" });

    // The store holds A's thread under A's tenant, not under the name the client gave.
    const [record] = await runtime.listRuns();
    expect(record?.sessionId).not.toBe("shared-name");
    expect(record?.sessionId.endsWith("~shared-name")).toBe(true);

    // A answers its own interrupt and the run completes.
    const events: { type: string }[] = [];
    await a.runAgent(
      { resume: [{ interruptId: interrupt!.id, status: "resolved" }] },
      {
        onEvent: ({ event }) => {
          events.push(event as { type: string });
        },
      },
    );
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    expect(await runtime.getRun(keelRunId)).toMatchObject({ status: "done" });
    // The same answer again finds the run no longer waiting: a conflict, and nothing changes.
    const again = await handler(
      new Request("http://keel.test/ag-ui/a", {
        method: "POST",
        headers: { authorization: "Bearer token-a", "content-type": "application/json" },
        body: JSON.stringify(resume),
      }),
    );
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { hint: expect.any(String) } });
    expect(await runtime.getRun(keelRunId)).toMatchObject({ status: "done" });
    await runtime.close();
  });

  it("can be left out", async () => {
    const { runtime } = await runtimeWith([{ text: "x" }]);
    const handler = createKeelHandler(runtime, { agUi: false });
    const response = await handler(new Request("http://keel.test/ag-ui/a", { method: "POST", body: "{}" }));
    expect(response.status).toBe(404);
    await runtime.close();
  });
});
