import { type Context, Hono } from "hono";
import type { RunRecord } from "../../contracts/run-types.js";
import { DecisionError, UnknownRunError } from "../../errors/error-classes.js";
import { KeelError } from "../../errors/keel-error.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { RunStreamChunk } from "../../runtime/stream-chunk.js";
import { AgUiInputError } from "./ag-ui-input-error.js";
import { resumedRunId, resumeToDecisions } from "./ag-ui-interrupts.js";
import { AgUiTranslator } from "./ag-ui-translator.js";
import { AG_UI_PROFILES, type AgUiEvent, type AgUiProfile } from "./ag-ui-types.js";
import { lastUserText, parseRunAgentInput } from "./run-agent-input.js";

export interface AgUiAppOptions {
  /** The agent `POST /` runs; `POST /:agentId` names one. */
  readonly agentId?: string;
  /** The event set served when the request does not ask for one; `0.0.59` by default. */
  readonly profile?: AgUiProfile;
  /**
   * Whose threads a request may touch, when the app is served for several callers (the Keel server mounts it
   * behind its tenants): the store's session id for a thread the request names, the thread a stored session
   * id is to the request, and whether it may see a run. Without it every thread and run is the caller's.
   */
  readonly scope?: AgUiScope;
}

/** How a request's threads map onto the store, for an app served to several callers. */
export interface AgUiScope {
  sessionId(c: Context, threadId: string): string;
  threadId(c: Context, sessionId: string): string;
  owns(c: Context, record: RunRecord): boolean;
}

/**
 * An AG-UI endpoint for `@ag-ui/client`'s `HttpAgent` (and CopilotKit): `POST /` or `POST /:agentId` takes a
 * RunAgentInput and answers with the run as AG-UI events over SSE. The thread is Keel's session; a `resume`
 * answering the interrupts of a paused run decides its calls and streams what it does next. `GET
 * /runs/:runId/events` replays a Keel run from its start and follows it while it goes on. The profile is the
 * option's, unless the request asks with `?protocol=1.0` or an `X-AG-UI-Protocol` header.
 */
export function createAgUiApp(runtime: Runtime, options: AgUiAppOptions = {}): Hono {
  const app = new Hono();
  app.post("/", (c) => runEndpoint(c, { runtime, options }, options.agentId));
  app.post("/:agentId", (c) => runEndpoint(c, { runtime, options }, c.req.param("agentId")));
  app.get("/runs/:runId/events", (c) => replayEndpoint(c, runtime, options));
  return app;
}

interface Served {
  readonly runtime: Runtime;
  readonly options: AgUiAppOptions;
}

async function runEndpoint(
  c: Context,
  { runtime, options }: Served,
  agentId: string | undefined,
): Promise<Response> {
  try {
    const profile = profileOf(c, options);
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new AgUiInputError("The request body is not valid JSON", {
        hint: "POST a RunAgentInput as JSON",
      });
    }
    const input = parseRunAgentInput(body);
    let chunks: AsyncIterableIterator<RunStreamChunk>;
    if (input.resume !== undefined && input.resume.length > 0) {
      const record = await visibleRun(c, { runtime, options }, resumedRunId(input.resume));
      const decide = resumeToDecisions(input.resume, record.pendingToolCalls);
      chunks = runtime.stream(decide) as AsyncIterableIterator<RunStreamChunk>;
    } else {
      if (agentId === undefined || runtime.getAgentInfo(agentId) === null) {
        throw new AgUiInputError(`No agent '${agentId ?? ""}' to run`, {
          hint: `POST to /<agentId>, one of: ${runtime
            .listAgents()
            .map((agent) => agent.id)
            .join(", ")}`,
          status: 404,
          code: "server.not_found",
        });
      }
      chunks = runtime.stream({
        agentId,
        sessionId: options.scope?.sessionId(c, input.threadId) ?? input.threadId,
        inputText: lastUserText(input),
        metadata: { agUi: { threadId: input.threadId, runId: input.runId } },
      }) as AsyncIterableIterator<RunStreamChunk>;
    }
    // The first chunk is read before answering, so a request Keel refuses is an HTTP error, not a broken stream.
    const first = await chunks.next();
    const translator = new AgUiTranslator({
      profile,
      threadId: input.threadId,
      runId: input.runId,
      parentRunId: input.parentRunId,
    });
    return sseResponse(translate(translator, first, chunks));
  } catch (error) {
    return errorResponse(error);
  }
}

/** The run's record, when the request may see it; the same 404 for an unknown run and another caller's. */
async function visibleRun(c: Context, { runtime, options }: Served, runId: string): Promise<RunRecord> {
  const record = await runtime.getRun(runId);
  if (record === null || (options.scope !== undefined && !options.scope.owns(c, record))) {
    throw new AgUiInputError(`No run '${runId}'`, {
      hint: "Name a run id from an interrupt's metadata",
      status: 404,
      code: "server.not_found",
    });
  }
  return record;
}

async function* translate(
  translator: AgUiTranslator,
  first: IteratorResult<RunStreamChunk>,
  chunks: AsyncIterableIterator<RunStreamChunk>,
): AsyncGenerator<AgUiEvent> {
  try {
    let next = first;
    while (!next.done) {
      yield* translator.push(next.value);
      if (translator.finished) return;
      next = await chunks.next();
    }
    yield* translator.abort("The run's stream ended before the run finished");
  } catch (error) {
    yield* translator.abort(error instanceof Error ? error.message : String(error));
  } finally {
    await chunks.return?.();
  }
}

/**
 * A Keel run replayed as AG-UI runs: one per stretch of its log from a start to a finish (a run that paused and
 * was resumed has several). The replay starts at the log's first event, so every construct it opens is closed
 * by the translator; it ends at a finish that leaves the run done or still waiting for decisions.
 */
async function replayEndpoint(c: Context, runtime: Runtime, options: AgUiAppOptions): Promise<Response> {
  try {
    const profile = profileOf(c, options);
    const runId = c.req.param("runId") ?? "";
    const record = await visibleRun(c, { runtime, options }, runId);
    const threadId =
      c.req.query("threadId") ?? options.scope?.threadId(c, record.sessionId) ?? record.sessionId;
    const chunks = runtime.attach(runId) as AsyncIterableIterator<RunStreamChunk>;
    return sseResponse(replay({ runtime, profile, threadId, runId }, chunks));
  } catch (error) {
    return errorResponse(error);
  }
}

async function* replay(
  {
    runtime,
    profile,
    threadId,
    runId,
  }: { runtime: Runtime; profile: AgUiProfile; threadId: string; runId: string },
  chunks: AsyncIterableIterator<RunStreamChunk>,
): AsyncGenerator<AgUiEvent> {
  let stretch = 0;
  let translator = new AgUiTranslator({ profile, threadId, runId });
  try {
    for await (const chunk of chunks) {
      if (translator.finished) {
        stretch += 1;
        translator = new AgUiTranslator({ profile, threadId, runId: `${runId}:${stretch}` });
      }
      yield* translator.push(chunk);
      if (chunk.kind !== "run.finished") continue;
      if (chunk.result.stopReason !== "suspended") return;
      // A run still waiting has nothing more to replay; one decided since goes on in the log.
      if ((await runtime.getRun(runId))?.status === "waiting") return;
    }
    yield* translator.abort("The run's stream ended before the run finished");
  } catch (error) {
    yield* translator.abort(error instanceof Error ? error.message : String(error));
  } finally {
    await chunks.return?.();
  }
}

function profileOf(c: Context, options: AgUiAppOptions): AgUiProfile {
  const asked = c.req.query("protocol") ?? c.req.header("x-ag-ui-protocol");
  if (asked === undefined) return options.profile ?? "0.0.59";
  if ((AG_UI_PROFILES as readonly string[]).includes(asked)) return asked as AgUiProfile;
  throw new AgUiInputError(`Unknown AG-UI protocol '${asked.slice(0, 40)}'`, {
    hint: `Ask for one of: ${AG_UI_PROFILES.join(", ")}`,
  });
}

/** The events as SSE data frames (`data: <json>` and a blank line, LF only, no terminator), as HttpAgent reads. */
function sseResponse(events: AsyncGenerator<AgUiEvent>): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await events.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(`data: ${JSON.stringify(next.value)}\n\n`));
    },
    async cancel() {
      // A client that leaves only stops reading: the run itself goes on.
      await events.return(undefined);
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

function errorResponse(error: unknown): Response {
  const status =
    error instanceof AgUiInputError
      ? error.status
      : error instanceof UnknownRunError
        ? 404
        : error instanceof DecisionError
          ? 409
          : error instanceof KeelError
            ? 400
            : 500;
  const body =
    error instanceof KeelError
      ? { error: { code: error.code, message: error.message, hint: error.hint } }
      : { error: { code: "server.internal", message: "The request failed inside the server" } };
  return Response.json(body, { status });
}
