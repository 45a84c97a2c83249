import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../contracts/message.js";
import type { RunContext, ToolResultRecord } from "../contracts/tool.js";
import type { Memory } from "../memory/memory.js";

/** Options of {@link describeMemoryConformance}. */
export interface MemoryConformanceOptions {
  /**
   * Whether what a run of one session wrote back stays out of another session's recall (default true). A
   * memory keyed by user or collection rather than session (mem0) says false.
   */
  isolatesSessions?: boolean;
  /** Called after each test, after `close()`, to remove what the memory stored. */
  cleanup?: (memory: Memory) => Promise<void> | void;
}

/** The parts of a run context a memory reads and writes, for one run of one session. */
interface MemoryConformanceRun {
  sessionId: string;
  /** The session's persisted state, shared by the session's runs. */
  state: Record<string, unknown>;
  inputText: string;
  finalOutput?: unknown;
  toolResults?: ToolResultRecord[];
}

/**
 * A run context for memory tests: the members a memory reads (`state`, `inputText`, `toolResults`,
 * `scratch.finalOutput`, ids, `transcript`) and the `memoryView` it writes; the rest is absent.
 */
function memoryRunContext(run: MemoryConformanceRun): RunContext {
  const scratch: Record<string, unknown> = {};
  if (run.finalOutput !== undefined) scratch.finalOutput = run.finalOutput;
  const transcript: Message[] = [{ role: "user", content: run.inputText }];
  if (typeof run.finalOutput === "string") transcript.push({ role: "assistant", content: run.finalOutput });
  return {
    agentId: "conformance-agent",
    sessionId: run.sessionId,
    runId: `run-${randomUUID()}`,
    inputText: run.inputText,
    deps: undefined,
    state: run.state,
    memoryView: {},
    toolResults: run.toolResults ?? [],
    scratch,
    systemPromptFragments: [],
    transcript,
    sessionArtifacts: [],
    assemblyMetadata: {},
    artifacts: [],
  } as unknown as RunContext;
}

/**
 * Register the vitest suite every `Memory` must pass: inject into a fresh session, writeback of a finished run,
 * the next run seeing it through inject and retrieve, records as plain objects, no change to the run's transcript,
 * session isolation (unless `isolatesSessions: false`), and close. `factory` makes a fresh memory per test.
 *
 * @example
 * describeMemoryConformance("my_memory", () => new MyMemory({ url: testUrl }));
 */
export function describeMemoryConformance(
  name: string,
  factory: () => Promise<Memory> | Memory,
  options: MemoryConformanceOptions = {},
): void {
  describe(`Memory conformance: ${name}`, () => {
    let memory: Memory;
    // A word no other test writes, so a memory shared between tests (a remote store) cannot confuse them.
    let word: string;
    const session = () => ({ sessionId: `session-${randomUUID()}`, state: {} as Record<string, unknown> });

    beforeEach(async () => {
      memory = await factory();
      word = `pelican${randomUUID().slice(0, 8)}`;
    });

    afterEach(async () => {
      await memory.close?.();
      await options.cleanup?.(memory);
    });

    /** One finished run of `where`: its input names the test's word, its output answers it. */
    async function finishRun(where: { sessionId: string; state: Record<string, unknown> }): Promise<void> {
      const ctx = memoryRunContext({
        ...where,
        inputText: `remember that the launch code is ${word}`,
        finalOutput: `noted: the launch code is ${word}`,
        toolResults: [{ toolCallId: "call_1", toolId: "lookup", result: { found: word }, success: true }],
      });
      await memory.inject(ctx);
      await memory.writeback(ctx);
    }

    it("injects into a fresh session without failing, leaving memoryView a plain object", async () => {
      const ctx = memoryRunContext({ ...session(), inputText: `what is ${word}?` });
      await memory.inject(ctx);
      expect(typeof ctx.memoryView).toBe("object");
      expect(JSON.parse(JSON.stringify(ctx.memoryView))).toEqual(ctx.memoryView);
    });

    it("retrieve on a fresh session returns an array with nothing about an unseen word", async () => {
      const ctx = memoryRunContext({ ...session(), inputText: "" });
      const records = await memory.retrieve(word, ctx);
      expect(Array.isArray(records)).toBe(true);
      expect(JSON.stringify(records)).not.toContain(word);
    });

    it("writes back a finished run so that a later run of the session retrieves it", async () => {
      const where = session();
      await finishRun(where);
      const next = memoryRunContext({ ...where, inputText: `what was the launch code ${word}?` });
      const records = await memory.retrieve(word, next);
      expect(records.length).toBeGreaterThan(0);
      for (const record of records) {
        expect(typeof record).toBe("object");
        expect(record).not.toBeNull();
        expect(Array.isArray(record)).toBe(false);
      }
      expect(JSON.stringify(records)).toContain(word);
    });

    it("injects what an earlier run of the session wrote back into the next run's memoryView", async () => {
      const where = session();
      await finishRun(where);
      const next = memoryRunContext({ ...where, inputText: `what was the launch code ${word}?` });
      await memory.inject(next);
      expect(JSON.stringify(next.memoryView)).toContain(word);
    });

    it("a view injected for a run does not change when that run writes back", async () => {
      const where = session();
      await finishRun(where);
      const ctx = memoryRunContext({ ...where, inputText: `and again ${word}`, finalOutput: "again" });
      await memory.inject(ctx);
      const injected = JSON.stringify(ctx.memoryView);
      await memory.writeback(ctx);
      expect(JSON.stringify(ctx.memoryView)).toBe(injected);
    });

    it("leaves the run's input, transcript and tool results as they were", async () => {
      const where = session();
      const ctx = memoryRunContext({
        ...where,
        inputText: `remember ${word}`,
        finalOutput: `ok ${word}`,
        toolResults: [{ toolCallId: "call_1", toolId: "lookup", result: { found: word }, success: true }],
      });
      const before = structuredClone({ transcript: ctx.transcript, toolResults: ctx.toolResults });
      await memory.inject(ctx);
      await memory.writeback(ctx);
      await memory.retrieve(word, ctx);
      expect(ctx.inputText).toBe(`remember ${word}`);
      expect({ transcript: ctx.transcript, toolResults: ctx.toolResults }).toEqual(before);
    });

    it("writes back a run without output or tool results", async () => {
      const where = session();
      const ctx = memoryRunContext({ ...where, inputText: `just ${word}` });
      await memory.inject(ctx);
      await expect(Promise.resolve(memory.writeback(ctx))).resolves.toBeUndefined();
    });

    it("keeps what it stores serialisable, so the session state can be persisted", async () => {
      const where = session();
      await finishRun(where);
      expect(JSON.parse(JSON.stringify(where.state))).toEqual(where.state);
    });

    if (options.isolatesSessions ?? true) {
      it("keeps one session's runs out of another session's inject and retrieve", async () => {
        await finishRun(session());
        const other = memoryRunContext({ ...session(), inputText: `what was the launch code ${word}?` });
        await memory.inject(other);
        expect(JSON.stringify(other.memoryView)).not.toContain(word);
        expect(JSON.stringify(await memory.retrieve(word, other))).not.toContain(word);
      });
    }

    it("close, when the memory has one, resolves", async () => {
      await finishRun(session());
      await expect(Promise.resolve(memory.close?.())).resolves.toBeUndefined();
    });
  });
}
