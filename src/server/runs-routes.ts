import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import type { RunRecord, RunResult, RunStatus } from "../contracts/run-types.js";
import type { ToolDecision } from "../loop/decisions.js";
import { parseCheckpointId } from "../loop/run-state.js";
import type { Runtime } from "../runtime/runtime.js";
import { afterSequenceOf, booleanField, checkId, jsonBody, stringField } from "./request-input.js";
import { badRequest, notFound, ServerRequestError } from "./server-error.js";
import { SSE_HEADERS, type SseChunk, type SseStreamOptions, sseRunStream } from "./sse-run-stream.js";
import { clientSessionId, ownsRun, presentRecord, storedSessionId, type Tenant } from "./tenancy.js";

export type ServerEnv = { Variables: { tenant: Tenant } };

/** The longest input text a run may be started with. */
const MAX_INPUT_CHARS = 1_000_000;

/**
 * The runs API: list agents; start a run (wait for its result, or 202 with its id at once); read a run; stream
 * its events as SSE from any sequence; decide, cancel and resume it; list its checkpoints. A tenant sees only
 * the runs it started: another tenant's run is as unknown as a run that never was. `GET /runs` lists them
 * (newest first, by agent, status or session) and `GET /runs/:id/policy` gives a run's effective permission
 * policy, each rule with its source.
 */
export function runsRoutes(runtime: Runtime, sse: SseStreamOptions): Hono<ServerEnv> {
  const app = new Hono<ServerEnv>();

  app.get("/agents", (c) => c.json({ agents: runtime.listAgents() }));

  app.post("/runs", async (c) => {
    const tenant = c.get("tenant");
    const body = await jsonBody(c);
    const agentId = stringField(body, "agentId", { required: true, max: 200 });
    const inputText = stringField(body, "inputText", { required: true, max: MAX_INPUT_CHARS });
    const sessionId = stringField(body, "sessionId");
    const durable = booleanField(body, "durable");
    const wait = booleanField(body, "wait");
    if (runtime.getAgentInfo(agentId) === null)
      throw notFound(
        "agent.unknown",
        `No agent '${agentId}'`,
        `GET /agents lists the agents: ${runtime
          .listAgents()
          .map((agent) => agent.id)
          .join(", ")}`,
      );
    const request = {
      agentId,
      inputText,
      runId: randomUUID(),
      sessionId: storedSessionId(
        tenant,
        sessionId === undefined ? randomUUID() : checkId(sessionId, "session id"),
      ),
      ...(durable === undefined ? {} : { durable }),
    };
    if (runtime.queue.distributed) {
      // Workers execute the run; this node only queues it (and, with wait, follows it to its end).
      await runtime.submit(request);
      if (wait === true) return c.json(presentResult(await resultOf(runtime.attach(request.runId)), tenant));
    } else {
      if (wait === true) return c.json(presentResult(await runtime.runDetailed(request), tenant));
      await startDetached(runtime.stream(request));
    }
    return c.json({ runId: request.runId }, 202, { location: `${c.req.path}/${request.runId}` });
  });

  app.get("/runs", async (c) => {
    const tenant = c.get("tenant");
    const status = c.req.query("status");
    if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus))
      throw badRequest(
        "request.query",
        `?status= must be one of ${RUN_STATUSES.join(", ")}, not '${status}'`,
        "Leave it out for runs of every status",
      );
    const sessionId = c.req.query("sessionId");
    const agentId = c.req.query("agentId");
    const limit = limitOf(c.req.query("limit"));
    const records = await runtime.listRuns({
      ...(status === undefined ? {} : { status: status as RunStatus }),
      ...(sessionId === undefined
        ? {}
        : { sessionId: storedSessionId(tenant, checkId(sessionId, "session id")) }),
    });
    // The store answers for every tenant: this one's runs only, newest first (a store lists the oldest first, so
    // runs started in the same millisecond keep that order reversed).
    const runs = records
      .filter((record) => ownsRun(tenant, record) && (agentId === undefined || record.agentId === agentId))
      .reverse()
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
      .slice(0, limit)
      .map((record) => presentRecord(tenant, record));
    return c.json({ runs });
  });

  app.get("/runs/:runId", async (c) => {
    const record = await ownedRun(runtime, c.get("tenant"), c.req.param("runId"));
    return c.json(presentRecord(c.get("tenant"), record));
  });

  app.get("/runs/:runId/events", async (c) => {
    const tenant = c.get("tenant");
    const afterSequence = afterSequenceOf(c);
    const record = await ownedRun(runtime, tenant, c.req.param("runId"));
    const chunks = runtime.attach(record.runId, { afterSequence });
    return new Response(
      sseRunStream(chunks as AsyncIterator<SseChunk>, {
        ...sse,
        present: presenter(tenant),
        presentKey: tenant.prefix,
      }),
      {
        headers: SSE_HEADERS,
      },
    );
  });

  app.get("/runs/:runId/checkpoints", async (c) => {
    const record = await ownedRun(runtime, c.get("tenant"), c.req.param("runId"));
    return c.json({ checkpoints: await runtime.listRunCheckpoints(record.runId) });
  });

  app.get("/runs/:runId/policy", async (c) => {
    const record = await ownedRun(runtime, c.get("tenant"), c.req.param("runId"));
    // The policy the run's next step would have: its agent's, with the skills its session has loaded.
    return c.json(await runtime.getEffectivePolicy(record.agentId, { sessionId: record.sessionId }));
  });

  app.post("/runs/:runId/decisions", async (c) => {
    const tenant = c.get("tenant");
    const record = await ownedRun(runtime, tenant, c.req.param("runId"));
    const decisions = decisionsOf(await jsonBody(c));
    if (runtime.queue.distributed) {
      // A worker applies them; this node follows what the run does after them.
      const waited = await runtime.submitDecisions({ runId: record.runId, decisions });
      const chunks = runtime.attach(record.runId, { afterSequence: waited.lastSequence });
      if (c.req.query("stream") !== "1") return c.json(presentResult(await resultOf(chunks), tenant));
      return new Response(
        sseRunStream(chunks as AsyncIterator<SseChunk>, {
          ...sse,
          present: presenter(tenant),
          presentKey: tenant.prefix,
        }),
        { headers: SSE_HEADERS },
      );
    }
    if (c.req.query("stream") === "1") {
      const chunks = runtime.stream({ runId: record.runId, decisions });
      // A refused decision rejects the first read: answer it as a JSON error, not as a broken stream.
      const first = await chunks.next();
      return new Response(
        sseRunStream(prepend(first, chunks) as AsyncIterator<SseChunk>, {
          ...sse,
          present: presenter(tenant),
          presentKey: tenant.prefix,
        }),
        { headers: SSE_HEADERS },
      );
    }
    return c.json(presentResult(await runtime.decide({ runId: record.runId, decisions }), tenant));
  });

  app.post("/runs/:runId/cancel", async (c) => {
    const record = await ownedRun(runtime, c.get("tenant"), c.req.param("runId"));
    const cancelled = await runtime.cancel(record.runId);
    return c.json({ runId: record.runId, cancelled }, 202);
  });

  app.post("/runs/:runId/resume", async (c) => {
    const tenant = c.get("tenant");
    const record = await ownedRun(runtime, tenant, c.req.param("runId"));
    const body = await jsonBody(c);
    const branch = booleanField(body, "branch") === true;
    const wait = booleanField(body, "wait");
    let checkpointId = stringField(body, "checkpointId", { max: 400 });
    if (checkpointId === undefined) {
      checkpointId = (await runtime.listRunCheckpoints(record.runId)).at(-1);
      if (checkpointId === undefined)
        throw new ServerRequestError(409, `Run '${record.runId}' has no checkpoint to resume from`, {
          code: "run.not_resumable",
          hint: "Durable runs (durable: true) checkpoint every step; other runs only when they suspend",
        });
    } else if (parseCheckpointId(checkpointId)?.runId !== record.runId) {
      // A checkpoint of another run could belong to another tenant: it is refused as unknown.
      throw notFound(
        "checkpoint.unknown",
        `Run '${record.runId}' has no checkpoint '${checkpointId}'`,
        `GET /runs/${record.runId}/checkpoints lists its checkpoints`,
      );
    }
    const request = {
      agentId: record.agentId,
      inputText: "",
      resumeFromCheckpoint: checkpointId,
      ...(branch ? { branch: true, runId: randomUUID() } : {}),
    };
    if (wait === true) return c.json(presentResult(await runtime.runDetailed(request), tenant));
    await startDetached(runtime.stream(request));
    return c.json({ runId: request.runId ?? record.runId }, 202);
  });

  return app;
}

const RUN_STATUSES: readonly RunStatus[] = ["created", "running", "waiting", "done"];

function limitOf(given: string | undefined): number {
  if (given === undefined) return 100;
  if (!/^[1-9][0-9]{0,3}$/.test(given))
    throw badRequest(
      "request.query",
      "?limit= must be a whole number from 1 to 9999",
      "Leave it out for 100",
    );
  return Number(given);
}

/** The run, when it exists and this tenant started it; else 404, the same answer for both. */
async function ownedRun(runtime: Runtime, tenant: Tenant, runId: string): Promise<RunRecord> {
  checkId(runId, "run id");
  const record = await runtime.getRun(runId);
  if (record === null || !ownsRun(tenant, record))
    throw notFound("run.unknown", `No run '${runId}'`, "POST /runs starts a run and answers with its id");
  return record;
}

/** Start a run and leave it going: resolves once it has started, rejects when it is refused. */
async function startDetached(chunks: AsyncIterableIterator<unknown>): Promise<void> {
  await chunks.next();
  await chunks.return?.();
}

/** The result a run's stream ends with. */
async function resultOf(chunks: AsyncIterableIterator<unknown>): Promise<RunResult> {
  let result: RunResult | undefined;
  for await (const chunk of chunks) {
    const finished = chunk as { kind: string; result?: RunResult };
    if (finished.kind === "run.finished") result = finished.result;
  }
  if (result === undefined)
    throw new ServerRequestError(502, "The run's stream ended without its result", {
      code: "run.events_lost",
      hint: "GET /runs/:runId shows how the run stands",
    });
  return result;
}

function presentResult(result: RunResult, tenant: Tenant): Omit<RunResult, "exception"> {
  // The exception is a live error object; its code, message and hint are already in `error`/`errorDetails`.
  const { exception: _exception, ...rest } = result;
  const shown = { ...rest, metadata: withClientSession(tenant, rest.metadata) };
  return rest.errorDetails === undefined
    ? shown
    : {
        ...shown,
        errorDetails: { ...rest.errorDetails, context: withClientSession(tenant, rest.errorDetails.context) },
      };
}

/**
 * Where a value names the run's session as the store has it (a result's metadata, an error's context, the
 * `session.acquired` payload), the client sees its own id, as everywhere else.
 */
function withClientSession<T extends Record<string, unknown> | undefined>(tenant: Tenant, value: T): T {
  const sessionId = value?.sessionId;
  if (typeof sessionId !== "string" || !sessionId.startsWith(tenant.prefix)) return value;
  return { ...value, sessionId: clientSessionId(tenant, sessionId) };
}

function presenter(tenant: Tenant): (chunk: SseChunk) => unknown {
  return (chunk) => {
    const withSession = chunk as SseChunk & {
      sessionId?: string;
      result?: RunResult;
      payload?: Record<string, unknown> & {
        errorDetails?: { context?: Record<string, unknown> };
        result?: RunResult;
      };
    };
    let shown: Record<string, unknown> = { ...withSession };
    if (typeof withSession.sessionId === "string" && withSession.sessionId.startsWith(tenant.prefix))
      shown.sessionId = withSession.sessionId.slice(tenant.prefix.length);
    if (withSession.result !== undefined)
      shown = { ...shown, result: presentResult(withSession.result, tenant) };
    const payload = withSession.payload;
    if (payload !== undefined) {
      let presented = withClientSession(tenant, payload);
      if (payload.result !== undefined)
        presented = { ...presented, result: presentResult(payload.result, tenant) };
      if (payload.errorDetails !== undefined)
        presented = {
          ...presented,
          errorDetails: {
            ...payload.errorDetails,
            context: withClientSession(tenant, payload.errorDetails.context),
          },
        };
      shown.payload = presented;
    }
    return shown;
  };
}

function decisionsOf(body: Record<string, unknown>): ToolDecision[] {
  const decisions = body.decisions;
  const hint = 'Send {"decisions": [{"toolCallId": "...", "action": "approve" | "deny" | "result"}]}';
  if (!Array.isArray(decisions) || decisions.length === 0)
    throw badRequest("request.decisions", "'decisions' must be a non-empty array", hint);
  for (const decision of decisions) {
    if (
      typeof decision !== "object" ||
      decision === null ||
      typeof (decision as { toolCallId?: unknown }).toolCallId !== "string" ||
      typeof (decision as { action?: unknown }).action !== "string"
    )
      throw badRequest("request.decisions", "Each decision needs a string toolCallId and action", hint);
  }
  return decisions as ToolDecision[];
}

/** An iterator that gives `first` before the rest of `rest`. */
function prepend<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncIterator<T> {
  let given = false;
  return {
    next: () => {
      if (given) return rest.next();
      given = true;
      return Promise.resolve(first);
    },
    return: () => rest.return?.() ?? Promise.resolve({ done: true, value: undefined }),
  };
}
