import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { KeelError, toErrorDetails } from "../errors/keel-error.js";
import { AsyncEventBus } from "../events/async-event-bus.js";
import { FileLoggingEventBus } from "../events/file-logging-event-bus.js";
import { RunEventLog } from "../events/run-event-log.js";
import { RunFolder } from "../run-folders/run-folder.js";
import { getLogger, setLogger } from "./logger.js";
import {
  clearSecretsForTesting,
  hasSecrets,
  REDACTED_SECRET,
  redactSecrets,
  redactSecretsIn,
  registerHeaderSecrets,
  registerSecret,
} from "./redact-secrets.js";

const KEY = "sk-live-4f9Qz81LmN0pRt7Vx2Yb";

afterEach(() => clearSecretsForTesting());

describe("redactSecrets", () => {
  it("returns the text untouched while no secret is registered", () => {
    expect(hasSecrets()).toBe(false);
    const text = `key ${KEY}`;
    expect(redactSecrets(text)).toBe(text);
  });

  it("redacts a registered key whole, with a Bearer prefix, and every occurrence", () => {
    registerSecret(KEY);
    expect(redactSecrets(`invalid key ${KEY}`)).toBe(`invalid key ${REDACTED_SECRET}`);
    expect(redactSecrets(`Authorization: Bearer ${KEY}.`)).toBe(`Authorization: Bearer ${REDACTED_SECRET}.`);
    expect(redactSecrets(`${KEY}${KEY} and ${KEY}`)).not.toContain("4f9Qz");
  });

  it("redacts any run of ten or more characters of a key, wherever it starts", () => {
    registerSecret(KEY);
    for (const [start, end] of [
      [0, 10],
      [3, 19],
      [KEY.length - 12, KEY.length],
      [5, KEY.length - 2],
    ] as const) {
      const piece = KEY.slice(start, end);
      const redacted = redactSecrets(`key "${piece}" is not valid`);
      expect(redacted).toBe(`key "${REDACTED_SECRET}" is not valid`);
    }
    // Nine characters are not enough to count as the key.
    expect(redactSecrets(`x${KEY.slice(4, 13)}x`)).toBe(`x${KEY.slice(4, 13)}x`);
  });

  it("finds several secrets and overlapping pieces in one text", () => {
    const other = "proxy-token-ABCDEFGHIJKLMNOP";
    registerSecret(KEY);
    registerSecret(other);
    const text = `a=${KEY.slice(2)} b=${other} c=${KEY.slice(0, 14)}`;
    expect(redactSecrets(text)).toBe(`a=${REDACTED_SECRET} b=${REDACTED_SECRET} c=${REDACTED_SECRET}`);
  });

  it("ignores values too short to be keys and finds whole short ones", () => {
    registerSecret("short");
    registerSecret("");
    registerSecret(undefined);
    expect(hasSecrets()).toBe(false);
    registerSecret("abc12345x");
    expect(redactSecrets("key abc12345x!")).toBe(`key ${REDACTED_SECRET}!`);
    expect(redactSecrets("key abc12345")).toBe("key abc12345");
  });

  it("registers credential header values and the token after their scheme", () => {
    registerHeaderSecrets({
      Authorization: "Basic dXNlcjpwYXNzd29yZDEyMw==",
      "X-Custom-Api-Key": "gateway-key-0123456789",
      "X-Request-Tag": "not-a-secret-value-here",
    });
    expect(redactSecrets("got dXNlcjpwYXNzd29yZDEyMw== and gateway-key-0123456789")).toBe(
      `got ${REDACTED_SECRET} and ${REDACTED_SECRET}`,
    );
    expect(redactSecrets("tag not-a-secret-value-here")).toBe("tag not-a-secret-value-here");
  });
});

describe("redactSecretsIn", () => {
  it("copies only what held a secret, at any depth, errors and their causes included", () => {
    registerSecret(KEY);
    const clean = { a: "fine", list: [1, "two"] };
    expect(redactSecretsIn(clean)).toBe(clean);
    const cause = new TypeError(`bad key ${KEY}`);
    const value = { nested: { list: ["ok", `k=${KEY}`] }, error: new Error("outer", { cause }), clean };
    const redacted = redactSecretsIn(value);
    expect(redacted.clean).toBe(clean);
    expect(redacted.nested.list).toEqual(["ok", `k=${REDACTED_SECRET}`]);
    const redactedCause = redacted.error.cause as Error;
    expect(redactedCause.name).toBe("TypeError");
    expect(redactedCause.message).toBe(`bad key ${REDACTED_SECRET}`);
    expect(String(redactedCause.stack)).not.toContain(KEY);
    expect(value.nested.list[1]).toBe(`k=${KEY}`);
  });
});

describe("the boundaries where text leaves Keel", () => {
  it("a KeelError redacts its message, hint, context and a plain cause; toErrorDetails a plain error", () => {
    registerSecret(KEY);
    const error = new KeelError(`HTTP 401: bad key ${KEY}`, {
      hint: `Check ${KEY.slice(0, 12)}`,
      context: { body: `{"key":"${KEY}"}` },
      cause: new SyntaxError(`Unexpected token in ${KEY}`),
    });
    const text = [error.message, error.hint, String(error), error.stack, JSON.stringify(error.context)];
    text.push((error.cause as Error).message, toErrorDetails(new Error(`plain ${KEY}`)).message);
    expect(text.join("\n")).not.toContain(KEY.slice(8, 18));
    expect(error.message).toBe(`HTTP 401: bad key ${REDACTED_SECRET}`);
  });

  it("a run's event log redacts error fields, the run folder and the file_logging bus every line", async () => {
    registerSecret(KEY);
    const dir = mkdtempSync(path.join(tmpdir(), "keel-redact-"));
    try {
      const log = new RunEventLog({ runId: "run-1", sessionId: "s", agentId: "a" }, new AsyncEventBus());
      const failed = log.emit("llm.failed", { error: `echo ${KEY}`, errorDetails: { message: KEY } });
      expect(failed.payload).toEqual({
        error: `echo ${REDACTED_SECRET}`,
        errorDetails: { message: REDACTED_SECRET },
      });
      const delta = { text: "plain streamed text" };
      expect(log.emit("llm.delta", delta).payload).toBe(delta);

      const folder = new RunFolder(dir, "run-1").open();
      const leaked = log.emit("custom.note", { note: `user text ${KEY}` });
      folder.writeEvents([leaked]);
      folder.close();
      expect(readFileSync(path.join(folder.dir, "events.jsonl"), "utf8")).toContain(
        `user text ${REDACTED_SECRET}`,
      );

      const bus = new FileLoggingEventBus({
        inner: new AsyncEventBus(),
        logPath: path.join(dir, "bus.jsonl"),
      });
      bus.emit("custom.note", { note: `user text ${KEY}` });
      await bus.close();
      expect(readFileSync(path.join(dir, "bus.jsonl"), "utf8")).toContain(`user text ${REDACTED_SECRET}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the logger passes redacted messages and details to the installed logger, as many arguments as given", () => {
    registerSecret(KEY);
    const calls: unknown[][] = [];
    const previous = setLogger({
      debug: (...args) => void calls.push(args),
      info: (...args) => void calls.push(args),
      warn: (...args) => void calls.push(args),
      error: (...args) => void calls.push(args),
    });
    try {
      getLogger().warn(`saw ${KEY}`);
      getLogger().error("failed", { header: `Bearer ${KEY}` });
      // Installing what getLogger() returns must not make it forward to itself.
      expect(setLogger(getLogger())).not.toBe(getLogger());
      getLogger().info("still works");
    } finally {
      setLogger(previous);
    }
    expect(calls).toEqual([
      [`saw ${REDACTED_SECRET}`],
      ["failed", { header: `Bearer ${REDACTED_SECRET}` }],
      ["still works"],
    ]);
  });
});
