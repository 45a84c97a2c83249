import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  FakeClock,
  FakeModelServer,
  jsonReply,
  silentReply,
  streamReply,
} from "../../../test/support/fake-model-server.js";
import { LLMConnectionError, LLMRateLimitError, LLMResponseError } from "../../errors/error-classes.js";
import { type ModelHttpRequest, sendModelRequest } from "./send-model-request.js";

let server: FakeModelServer;

beforeEach(async () => {
  server = await FakeModelServer.start();
});

afterEach(async () => {
  await server.close();
});

function request(overrides: Partial<ModelHttpRequest> = {}): ModelHttpRequest {
  return {
    url: `${server.url}/v1/messages`,
    headers: { "content-type": "application/json", "x-api-key": "k" },
    body: { model: "m", stream: true },
    timeoutMs: 2000,
    provider: "Anthropic",
    keyVariable: "ANTHROPIC_API_KEY",
    clock: new FakeClock(),
    ...overrides,
  };
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a failure");
}

async function readAll(response: { chunks(): AsyncIterable<Uint8Array> }): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of response.chunks()) text += decoder.decode(chunk, { stream: true });
  return text;
}

describe("sendModelRequest", () => {
  it("POSTs the JSON body with the headers and streams the body back", async () => {
    server.reply(streamReply("data: one\n\ndata: two\n\n", { pieceSize: 4 }));
    const response = await sendModelRequest(request());
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(await readAll(response)).toBe("data: one\n\ndata: two\n\n");
    const [received] = server.requests;
    expect(received?.method).toBe("POST");
    expect(received?.path).toBe("/v1/messages");
    expect(received?.headers["x-api-key"]).toBe("k");
    expect(received?.headers["content-type"]).toBe("application/json");
    expect(received?.rawBody).toBe('{"model":"m","stream":true}');
  });

  it("reads a whole body as text", async () => {
    server.reply(jsonReply(200, { ok: true }));
    const response = await sendModelRequest(request());
    expect(await response.text()).toBe('{"ok":true}');
  });

  it("throws the typed error of a non-2xx answer", async () => {
    server.reply(
      jsonReply(
        429,
        { type: "error", error: { type: "rate_limit_error", message: "slow" } },
        { "retry-after": "2" },
      ),
      jsonReply(401, {
        type: "error",
        error: { type: "authentication_error", message: "invalid x-api-key" },
      }),
      jsonReply(503, { type: "error", error: { type: "api_error", message: "unavailable" } }),
    );
    const limited = await failure(sendModelRequest(request()));
    expect(limited).toBeInstanceOf(LLMRateLimitError);
    expect((limited as LLMRateLimitError).retryAfterMs).toBe(2000);
    const unauthorized = await failure(sendModelRequest(request()));
    expect(unauthorized).toBeInstanceOf(LLMResponseError);
    expect((unauthorized as LLMResponseError).status).toBe(401);
    expect((unauthorized as LLMResponseError).hint).toMatch(/ANTHROPIC_API_KEY/);
    expect(await failure(sendModelRequest(request()))).toBeInstanceOf(LLMConnectionError);
  });

  it("fails with LLMConnectionError when the first byte is later than the timeout, and closes the socket", async () => {
    server.reply(silentReply());
    const error = await failure(sendModelRequest(request({ timeoutMs: 50 })));
    expect(error).toBeInstanceOf(LLMConnectionError);
    expect(error.message).toBe("Anthropic sent no response within 50 ms");
    expect((error as LLMConnectionError).context).toMatchObject({ provider: "Anthropic", timeoutMs: 50 });
    expect(await server.settledRequestSockets()).toBe(0);
  });

  it("fails when the body goes silent for longer than the timeout, and closes the socket", async () => {
    server.reply((response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: first\n\n");
    });
    const response = await sendModelRequest(request({ timeoutMs: 50 }));
    const error = await failure(readAll(response));
    expect(error).toBeInstanceOf(LLMConnectionError);
    expect(error.message).toBe("Anthropic sent nothing for 50 ms in the middle of its response");
    expect(await server.settledRequestSockets()).toBe(0);
  });

  it("fails with LLMConnectionError when the connection drops mid-body", async () => {
    server.reply(streamReply("data: one\n\ndata: two\n\n", { dropAfter: 12 }));
    const response = await sendModelRequest(request());
    const error = await failure(readAll(response));
    expect(error).toBeInstanceOf(LLMConnectionError);
    expect(error.message).toMatch(/^The connection to Anthropic dropped in the middle of its response: /);
  });

  it("fails with LLMConnectionError when nothing listens", async () => {
    const closed = await FakeModelServer.start();
    const url = `${closed.url}/v1/messages`;
    await closed.close();
    const error = await failure(sendModelRequest(request({ url })));
    expect(error).toBeInstanceOf(LLMConnectionError);
    expect(error.message).toMatch(
      new RegExp(`^Could not reach Anthropic at ${url}: fetch failed \\(ECONNREFUSED`),
    );
  });

  it("rejects with the run's abort reason, before or during the request", async () => {
    const early = new AbortController();
    early.abort(new Error("cancelled before"));
    expect((await failure(sendModelRequest(request({ signal: early.signal })))).message).toBe(
      "cancelled before",
    );

    server.reply(silentReply());
    const controller = new AbortController();
    const pending = sendModelRequest(request({ signal: controller.signal }));
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const reason = new Error("user cancelled");
    controller.abort(reason);
    expect(await failure(pending)).toBe(reason);
    expect(await server.settledRequestSockets()).toBe(0);
  });

  it("aborts the request when the reader stops early", async () => {
    server.reply((response) => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write("data: first\n\n");
    });
    const response = await sendModelRequest(request());
    for await (const _chunk of response.chunks()) break;
    expect(await server.settledRequestSockets()).toBe(0);

    server.reply((reply) => {
      reply.writeHead(200, { "content-type": "text/event-stream" });
      reply.write("data: first\n\n");
    });
    const unread = await sendModelRequest(request());
    unread.close();
    expect(await server.settledRequestSockets()).toBe(0);
  });
});
