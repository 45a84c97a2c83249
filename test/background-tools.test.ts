import { describe, expect, it } from "vitest";
import {
  type BackgroundTool,
  DEFAULT_EXECUTION_SPEC,
  type JobHandle,
  type JobStatus,
  type Message,
  Runtime,
  registerPlugin,
  type ToolMessage,
} from "../src/index.js";
import type { RunState } from "../src/loop/run-state.js";
import { InMemorySessionManager } from "../src/sessions/in-memory-session-manager.js";
import { scriptedModel } from "../src/testing/index.js";
import { ProcessView } from "./support/crashable-store.js";
import { collect, deferred, runtimeWith, toolCall } from "./support/harness.js";

/** Polls come quickly in these tests; the defaults (250 ms doubling to 5 s) are for real jobs. */
const FAST_POLLS = { type: "safe", config: { poll_initial_delay_ms: 1, poll_max_delay_ms: 2 } };

interface JobBehaviour {
  /** The status the nth poll (1-based) of a job reports. */
  status(poll: number): Omit<JobStatus, "jobId">;
  /** Runs at each poll before it answers (a poll that never returns stands for a process that died). */
  duringPoll?(poll: number): Promise<void> | void;
  timeoutMs?: number;
  interruptBehavior?: "cancel" | "block";
}

/** A job service the tool submits to, shared by every simulated process; it records what was asked of it. */
class JobService {
  submitted: Record<string, unknown>[] = [];
  polled: string[] = [];
  cancelled: string[] = [];
  foregroundCalls = 0;
  readonly cancelledOnce = deferred<string>();

  tool(behaviour: JobBehaviour): BackgroundTool {
    return {
      name: "render",
      description: "Render a scene in the background",
      schema: () => ({ type: "object", properties: { scene: { type: "string" } } }),
      executionSpec: () => ({
        ...DEFAULT_EXECUTION_SPEC,
        defaultTimeoutMs: behaviour.timeoutMs ?? null,
        interruptBehavior: behaviour.interruptBehavior ?? "cancel",
      }),
      invoke: () => {
        this.foregroundCalls++;
        return "rendered in the foreground";
      },
      invokeBackground: async (params) => {
        this.submitted.push(params);
        const handle: JobHandle = {
          jobId: `job-${this.submitted.length}`,
          toolId: "render",
          status: "pending",
          createdAt: "2026-01-01T00:00:00.000Z",
        };
        return handle;
      },
      pollJob: async (handle) => {
        this.polled.push(handle.jobId);
        const count = this.polled.filter((id) => id === handle.jobId).length;
        await behaviour.duringPoll?.(count);
        return { jobId: handle.jobId, ...behaviour.status(count) };
      },
      cancelJob: async (handle) => {
        this.cancelled.push(handle.jobId);
        this.cancelledOnce.resolve(handle.jobId);
        return true;
      },
    };
  }
}

const succeedsOnThirdPoll = (poll: number): Omit<JobStatus, "jobId"> =>
  poll < 3 ? { status: "running", progress: poll / 3 } : { status: "succeeded", result: { frames: 24 } };

const neverEnds = (): Omit<JobStatus, "jobId"> => ({ status: "running" });

function toolMessages(transcript: readonly Message[]): ToolMessage[] {
  return transcript.filter((message): message is ToolMessage => message.role === "tool");
}

describe("background tools: the loop submits the job and polls it", () => {
  it("submits, polls until the job succeeds, and makes the job's result the call's result", async () => {
    const jobs = new JobService();
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("render", { scene: "intro" }, "r1")] }, { text: "done" }],
      { tools: [jobs.tool({ status: succeedsOnThirdPoll })], tool_executor: FAST_POLLS },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    const result = chunks.at(-1)!.result!;
    expect(result.stopReason).toBe("completed");
    expect(jobs.submitted).toEqual([{ scene: "intro" }]);
    expect(jobs.polled).toEqual(["job-1", "job-1", "job-1"]);
    expect(jobs.foregroundCalls).toBe(0);
    expect(jobs.cancelled).toEqual([]);
    const kinds = chunks.map((chunk) => chunk.kind);
    const submitted = chunks.find((chunk) => chunk.kind === "tool.background.submitted");
    expect(submitted?.payload).toEqual({ toolId: "render", toolCallId: "r1", jobId: "job-1" });
    expect(kinds.indexOf("tool.background.submitted")).toBeLessThan(kinds.indexOf("tool.finished"));
    expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload).toMatchObject({
      toolCallId: "r1",
      result: { frames: 24 },
    });
    expect(toolMessages(model.requests[1]!.messages)[0]!.content).toBe('{"frames":24}');
    await runtime.close();
  });

  it("a failed job fails the call with the job's error, and the run goes on", async () => {
    const jobs = new JobService();
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("render", { scene: "intro" }, "r1")] }, { text: "sorry" }],
      {
        tools: [
          jobs.tool({
            status: (poll) => (poll < 2 ? { status: "running" } : { status: "failed", error: "GPU melted" }),
          }),
        ],
        tool_executor: FAST_POLLS,
      },
    );
    const chunks = await collect(runtime.stream({ agentId: "a", inputText: "go" }));
    expect(chunks.at(-1)!.result!.stopReason).toBe("completed");
    expect(chunks.find((chunk) => chunk.kind === "tool.finished")!.payload).toMatchObject({
      toolCallId: "r1",
      code: "tool.error",
      error: "GPU melted",
    });
    const message = toolMessages(model.requests[1]!.messages)[0]!;
    expect(message.isError).toBe(true);
    expect(JSON.parse(message.content).error).toEqual({ code: "tool.error", message: "GPU melted" });
    expect(jobs.cancelled).toEqual([]);
    await runtime.close();
  });

  it("cancelling the run while the job runs calls cancelJob with its handle", async () => {
    const jobs = new JobService();
    const polling = deferred();
    const { runtime } = await runtimeWith(
      [{ toolCalls: [toolCall("render", {}, "r1")] }, { text: "never" }],
      {
        tools: [jobs.tool({ status: neverEnds, duringPoll: () => polling.resolve() })],
        tool_executor: FAST_POLLS,
      },
    );
    const done = runtime.runDetailed({ agentId: "a", runId: "bg-cancel", inputText: "go" });
    await polling.promise;
    expect(await runtime.cancel("bg-cancel")).toBe(true);
    const result = await done;
    expect(result.stopReason).toBe("cancelled");
    expect(await jobs.cancelledOnce.promise).toBe("job-1");
    expect(jobs.cancelled).toEqual(["job-1"]);
    await runtime.close();
  });

  it("the step timeout cancels the job", async () => {
    const jobs = new JobService();
    const { runtime } = await runtimeWith([{ toolCalls: [toolCall("render", {}, "r1")] }, { text: "x" }], {
      tools: [jobs.tool({ status: neverEnds })],
      tool_executor: FAST_POLLS,
      runtime: { step_timeout_ms: 40 },
    });
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("timeout");
    expect(await jobs.cancelledOnce.promise).toBe("job-1");
    expect(jobs.cancelled).toEqual(["job-1"]);
    await runtime.close();
  });

  it("the tool's timeout cancels the job and fails only the call", async () => {
    const jobs = new JobService();
    const { runtime, model } = await runtimeWith(
      [{ toolCalls: [toolCall("render", {}, "r1")] }, { text: "it took too long" }],
      { tools: [jobs.tool({ status: neverEnds, timeoutMs: 30 })], tool_executor: FAST_POLLS },
    );
    const result = await runtime.runDetailed({ agentId: "a", inputText: "go" });
    expect(result.stopReason).toBe("completed");
    expect(jobs.cancelled).toEqual(["job-1"]);
    expect(JSON.parse(toolMessages(model.requests[1]!.messages)[0]!.content).error.code).toBe("tool.timeout");
    await runtime.close();
  });

  it("a blocking background tool is polled to the end even when the run is cancelled", async () => {
    const jobs = new JobService();
    const polling = deferred();
    const { runtime } = await runtimeWith(
      [{ toolCalls: [toolCall("render", {}, "r1")] }, { text: "never" }],
      {
        tools: [
          jobs.tool({
            status: (poll) => (poll < 4 ? { status: "running" } : { status: "succeeded", result: "ok" }),
            duringPoll: (poll) => {
              if (poll === 2) polling.resolve();
            },
            interruptBehavior: "block",
          }),
        ],
        tool_executor: FAST_POLLS,
      },
    );
    const done = runtime.runDetailed({ agentId: "a", runId: "bg-block", inputText: "go" });
    await polling.promise;
    await runtime.cancel("bg-block");
    const result = await done;
    expect(result.stopReason).toBe("cancelled");
    expect(jobs.polled).toEqual(["job-1", "job-1", "job-1", "job-1"]);
    expect(jobs.cancelled).toEqual([]);
    await runtime.close();
  });
});

describe("background tools in durable runs", () => {
  let processCount = 0;

  async function startProcess(shared: InMemorySessionManager, tool: BackgroundTool) {
    const view = new ProcessView(shared);
    const type = `background_test_store_${++processCount}`;
    registerPlugin("session", type, () => view);
    // Stateless answers, so any process can continue the run: render once, then say done.
    const llm = scriptedModel(
      [
        (request: { messages: readonly Message[] }) =>
          request.messages.some((message) => message.role === "tool")
            ? { text: "done" }
            : { toolCalls: [{ id: "r1", name: "render", arguments: { scene: "intro" } }] },
      ],
      { whenExhausted: "repeat-last" },
    );
    const runtime = await Runtime.fromDict({
      session: { type },
      agents: [{ id: "a", name: "Agent A", tools: [tool], llm, tool_executor: FAST_POLLS }],
    });
    return { runtime, view };
  }

  it("records the job's handle, and a resumed run polls that job instead of submitting another", async () => {
    const shared = new InMemorySessionManager();
    const jobs = new JobService();
    let views: ProcessView[] = [];
    const tool = jobs.tool({
      status: (poll) => (poll < 4 ? { status: "running" } : { status: "succeeded", result: "rendered" }),
      // The first process dies while it polls for the second time.
      duringPoll: async (poll) => {
        if (poll === 2 && views.length === 1) await views[0]!.die();
      },
    });
    const first = await startProcess(shared, tool);
    views = [first.view];
    void first.runtime.runDetailed({ agentId: "a", inputText: "go", durable: true, runId: "bg-durable" });
    await waitFor(() => first.view.isCrashed);
    // The checkpoint written after the submission holds the call running with its job.
    const sessionId = (await shared.getRun("bg-durable"))!.sessionId;
    const latest = (await first.runtime.listRunCheckpoints("bg-durable")).at(-1)!;
    const state = (await shared.loadCheckpoint(sessionId, latest))!.state as unknown as RunState;
    expect(state.toolCalls).toEqual([
      expect.objectContaining({
        id: "r1",
        status: "running",
        job: expect.objectContaining({ jobId: "job-1" }),
      }),
    ]);

    const second = await startProcess(shared, tool);
    views.push(second.view);
    const result = await second.runtime.resumeRun("bg-durable");
    expect(result.stopReason).toBe("completed");
    expect(result.finalOutput).toBe("done");
    expect(jobs.submitted).toEqual([{ scene: "intro" }]);
    expect(jobs.polled).toEqual(["job-1", "job-1", "job-1", "job-1"]);
    const events = await shared.loadEvents("bg-durable");
    expect(events.filter((event) => event.kind === "tool.background.submitted")).toHaveLength(1);
    expect(events.find((event) => event.kind === "tool.completed")?.payload).toMatchObject({
      toolCallId: "r1",
      result: "rendered",
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
