import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RuntimeEvent } from "../contracts/runtime-event.js";
import { DEFAULT_LARGE_OUTPUT_BYTES, offloadLargeOutput } from "./large-output.js";
import { RunFolder, summarizePayload, summarizeValue } from "./run-folder.js";

const base = mkdtempSync(path.join(tmpdir(), "keel-run-folder-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const call = { toolCallId: "c/1", toolId: "t" };

describe("summaries for the run folder's logs", () => {
  it("redacts secrets, summarises data keys and cuts long values", () => {
    const shown = summarizePayload({
      toolCallId: "c1",
      api_key: "sk-1",
      params: { path: "a.txt", token: "t0k", body: "y".repeat(1000) },
      result: { ok: true, summary: "Read a.txt", data: "z".repeat(1000), artifacts: [] },
      error: "e".repeat(2000),
      nested: { password: "p", n: 1 },
    });
    expect(shown.api_key).toBe("[redacted]");
    expect(shown.params).not.toContain("t0k");
    expect((shown.params as string).length).toBeLessThanOrEqual(200);
    expect(shown.result).toBe("Read a.txt");
    expect((shown.error as string).length).toBeLessThanOrEqual(500);
    expect(shown.nested).toEqual({ password: "[redacted]", n: 1 });
    expect(summarizeValue(42)).toBe("42");
  });
});

describe("offloadLargeOutput", () => {
  it("leaves small and scalar outputs alone", () => {
    expect(offloadLargeOutput(7, call, { limit: 10, folder: undefined })).toBeUndefined();
    expect(offloadLargeOutput("short", call, { limit: 10, folder: undefined })).toBeUndefined();
    expect(
      offloadLargeOutput({ a: 1 }, call, { limit: DEFAULT_LARGE_OUTPUT_BYTES, folder: undefined }),
    ).toBeUndefined();
  });

  it("measures UTF-8 bytes: 6 chars of 3 bytes are over a 17-byte limit", () => {
    const offloaded = offloadLargeOutput("€€€€€€", call, { limit: 17, folder: undefined })!;
    expect(offloaded.artifact.metadata.bytes).toBe(18);
    expect(offloaded.result.artifacts[0]).toEqual({
      id: "output-c%2F1",
      name: "output-c%2F1.txt",
      bytes: 18,
    });
  });

  it("keeps a ToolResult's ok, summary and artifacts, drops its data, and archives it in the run folder", () => {
    const folder = new RunFolder(base, "run-1").open();
    const data = { ok: true, summary: "Read f", data: { content: "q".repeat(100) }, artifacts: [] };
    const offloaded = offloadLargeOutput(data, call, { limit: 50, folder })!;
    expect(offloaded.result).toMatchObject({
      ok: true,
      artifacts: [{ id: "output-c%2F1", path: "archive/output-c%2F1.json" }],
    });
    expect(offloaded.result.summary).toMatch(
      /^Read f \(output of \d+ bytes stored as artifact output-c%2F1, not shown\)$/,
    );
    expect(offloaded.result).not.toHaveProperty("data");
    expect(readFileSync(path.join(folder.dir, "archive", "output-c%2F1.json"), "utf8")).toContain("qqq");
  });
});

describe("RunFolder", () => {
  it("appends tool lines, error lines for failures and summarised events", () => {
    const folder = new RunFolder(base, "run-2").open();
    const line = {
      toolCallId: "c1",
      toolId: "t",
      toolset: null,
      startedAt: new Date().toISOString(),
      durationMs: 1,
      summary: "",
      artifacts: [],
    };
    folder.recordTool({ ...line, status: "succeeded" });
    folder.recordTool({ ...line, status: "failed", error: { code: "x.y", message: "no", rule: "r1" } });
    folder.writeEvents([
      new RuntimeEvent("tool.started", { params: { secret: "s" } }, 0, "run-2", "s", "a", 1),
    ]);
    const read = (file: string) => readFileSync(path.join(folder.dir, file), "utf8").trim().split("\n");
    expect(read("logs/tools.jsonl")).toHaveLength(2);
    expect(JSON.parse(read("logs/errors.jsonl")[0]!)).toMatchObject({
      code: "x.y",
      message: "no",
      rule: "r1",
    });
    const event = JSON.parse(read("events.jsonl")[0]!);
    expect(event).toMatchObject({ sequence: 1, kind: "tool.started" });
    expect(JSON.stringify(event)).not.toContain('"s"}');
  });
});
