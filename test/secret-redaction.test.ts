import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { getLogger, type Logger, Runtime, setLogger } from "../src/index.js";
import { FakeModelServer, jsonReply, type Reply } from "./support/fake-model-server.js";
import { collect } from "./support/harness.js";

/**
 * A gateway that echoes the API key in its error body: the key, whole or in part, must reach none of the thrown
 * error, the RunResult, the stream, the run folder, the event log file and the logger.
 */

const KEY_VARIABLE = "KEEL_TEST_ECHOED_KEY";
const KEY = "sk-ant-e2e-7Hq2Lw9XmZ4vB8nR3tK6pY1cF5dG0sJ";
/** Long enough to identify the key, not the key itself. */
const KEY_PIECE = KEY.slice(9, 31);
/** Pieces that must never be written: the key's middle and its end, as any echo would carry them. */
const MARKERS = [KEY.slice(12, 22), KEY.slice(-10)];

const base = mkdtempSync(path.join(tmpdir(), "keel-secret-redaction-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let server: FakeModelServer;
let runtime: Runtime | undefined;
let logged: string[];
let previousLogger: Logger;

beforeEach(async () => {
  server = await FakeModelServer.start();
  process.env[KEY_VARIABLE] = KEY;
  logged = [];
  const record =
    (level: string) =>
    (message: string, details?: Record<string, unknown>): void => {
      logged.push(`${level} ${message} ${everyString(details).join(" ")}`);
    };
  previousLogger = setLogger({
    debug: record("debug"),
    info: record("info"),
    warn: record("warn"),
    error: record("error"),
  });
});

afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  setLogger(previousLogger);
  delete process.env[KEY_VARIABLE];
  await server.close();
});

/** Every string in a value: own properties at any depth, and an error's message, stack, hint and cause. */
function everyString(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === "string") return [value];
  if (typeof value !== "object" || value === null || seen.has(value)) return [];
  seen.add(value);
  const strings: string[] = [];
  if (value instanceof Error) {
    strings.push(String(value), value.message, value.stack ?? "");
    strings.push(...everyString(value.cause, seen));
  }
  for (const key of Object.getOwnPropertyNames(value)) {
    strings.push(...everyString((value as Record<string, unknown>)[key], seen));
  }
  return strings;
}

function expectNoKey(where: string, value: unknown): void {
  const text = everyString(value).join("\n");
  for (const marker of MARKERS) expect(text, `${where} leaks the key`).not.toContain(marker);
}

const echoes: Record<string, (provider: "anthropic" | "openai_compatible") => Reply> = {
  "401 echoing the whole key": (provider) =>
    provider === "anthropic"
      ? jsonReply(401, {
          type: "error",
          error: { type: "authentication_error", message: `invalid x-api-key: ${KEY}` },
        })
      : jsonReply(401, {
          error: { type: "invalid_request_error", message: `Incorrect API key provided: Bearer ${KEY}` },
        }),
  "400 echoing a long piece of the key as plain text": () => (response) => {
    response.writeHead(400, { "content-type": "text/plain" });
    response.end(`gateway: header rejected (key ...${KEY_PIECE}...)`);
  },
  "500 echoing the key in a detail field": () =>
    jsonReply(500, { detail: `upstream refused credentials ${KEY} for this route` }),
};

describe("an API key echoed in a provider's error body is redacted everywhere Keel writes it", () => {
  for (const provider of ["anthropic", "openai_compatible"] as const) {
    for (const [name, reply] of Object.entries(echoes)) {
      it(`${provider}: ${name}`, async () => {
        server.reply(reply(provider));
        const root = path.join(base, `${provider}-${name.split(" ")[0]}`);
        const eventLog = path.join(root, "events-log.jsonl");
        runtime = await Runtime.fromDict({
          events: { type: "file_logging", config: { log_path: eventLog } },
          agents: [
            {
              id: "a",
              name: "A",
              llm: {
                provider,
                api_key_env: KEY_VARIABLE,
                api_base: provider === "anthropic" ? server.url : `${server.url}/v1`,
                retry: { max_attempts: 1 },
              },
              runtime: { run_folders: { root_dir: root } },
            },
          ],
        });

        const chunks = await collect(runtime.stream({ agentId: "a", inputText: "hi" }));
        const result = chunks.at(-1)?.result;
        expect(result?.stopReason).toBe("failed");
        // The echo did reach Keel: the message still carries the rest of the vendor's words.
        expect(result?.error).toMatch(/HTTP (401|400|500)/);
        expectNoKey("the stream", chunks);
        expectNoKey("RunResult.errorDetails", result?.errorDetails);
        expectNoKey("the RunResult", result);

        const thrown = await runtime
          .run({ agentId: "a", inputText: "again" })
          .catch((error: unknown) => error);
        expect(thrown).toBeInstanceOf(Error);
        expectNoKey("the thrown error", thrown);
        expectNoKey("the thrown error's hint", (thrown as { hint?: string }).hint);

        const dir = path.join(root, "runs", encodeURIComponent(result!.runId));
        const events = readFileSync(path.join(dir, "events.jsonl"), "utf8");
        expect(events).toContain("llm.failed");
        expectNoKey("events.jsonl", events);
        const errors = path.join(dir, "logs", "errors.jsonl");
        if (existsSync(errors)) expectNoKey("errors.jsonl", readFileSync(errors, "utf8"));

        await runtime.close();
        runtime = undefined;
        const eventLogText = readFileSync(eventLog, "utf8");
        expect(eventLogText).toContain("run.failed");
        expectNoKey("the file_logging event log", eventLogText);
        expectNoKey("the logger", logged);
      });
    }
  }

  it("the logger redacts a known key from messages and details", async () => {
    server.reply(jsonReply(401, { error: { message: "no" } }));
    runtime = await Runtime.fromDict({
      agents: [
        {
          id: "a",
          name: "A",
          llm: { provider: "anthropic", api_key_env: KEY_VARIABLE, api_base: server.url },
        },
      ],
    });
    // Loading the agent registered its key.
    await runtime.runDetailed({ agentId: "a", inputText: "hi" }).catch(() => undefined);
    getLogger().warn(`a plugin saw ${KEY}`, { header: `Bearer ${KEY_PIECE}`, nested: [new Error(KEY)] });
    expect(logged.join("\n")).toContain("a plugin saw [redacted]");
    expectNoKey("the logger", logged);
  });
});
