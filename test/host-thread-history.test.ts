import { afterEach, describe, expect, it } from "vitest";
import type { ActionCallError, AgentBindingInput, HostStores } from "../src/host/index.js";
import { attachForeign } from "./support/foreign-runtime.js";
import { binding, collect, message } from "./support/host-scenario.js";
import { grantFor as grantInConversation } from "./support/run-grant.js";
import { appendThreaded } from "./support/threaded-history.js";

/**
 * A run started in a thread reads that thread of its conversation — history pages and searches, events, artifacts
 * — and the whole conversation only when the manifest reads history and the binding says `history_scope:
 * "conversation"`.
 */

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The grant of a run started in thread t1 of conversation `own`. */
const grantFor = (options: Parameters<typeof grantInConversation>[0]) =>
  grantInConversation({ ...options, event: { thread_id: "t1", ...options.event } });

describe("the thread a run reads", () => {
  it("is the event's thread unless the runner reads history and the binding grants the conversation", () => {
    const history = { history: ["page"] };
    const whole = { resource_policy: { history_scope: "conversation" as const } };
    expect(grantFor({ permissions: history }).historyThread).toBe("t1");
    expect(grantFor({ permissions: history, binding: whole }).historyThread).toBeNull();
    expect(grantFor({ permissions: { events: ["get"] }, binding: whole }).historyThread).toBeNull();
    // Both layers: a binding's grant does nothing for a runner that does not read history.
    expect(grantFor({ binding: whole }).historyThread).toBe("t1");
    // An event outside any thread reads its conversation whole; so does one outside its binding's scope.
    expect(grantFor({ permissions: history, event: { thread_id: null } }).historyThread).toBeNull();
    const scoped = { scope: { scope_type: "bot" as const, scope_id: "bot-1" }, ...whole };
    expect(
      grantFor({ permissions: history, binding: scoped, event: { bot_id: "bot-2" } }).historyThread,
    ).toBe("t1");
  });
});

const seed = (stores: HostStores) =>
  appendThreaded(stores, { conversation: "own", idPrefix: "seed-" }, [
    ["t1", "first in thread one"],
    ["t2", "first in thread two"],
    [null, "in the channel"],
    ["t1", "second in thread one"],
  ]);

/** What a runner reading history and events learns, run in thread t1 of `own`, under the given binding. */
async function readsOf(resource_policy: AgentBindingInput["resource_policy"] = {}) {
  const reads: Record<string, unknown> = {};
  const { host, stores, contexts } = await attachForeign({
    closers,
    manifest: {
      permissions: { history: ["page", "search"], events: ["get", "page"], artifacts: ["metadata"] },
    },
    during: async (context, runtime) => {
      const call = async (name: string, action: string, data: Record<string, unknown>) => {
        try {
          reads[name] = await runtime.call(action, { run_id: context.run_id, ...data });
        } catch (error) {
          reads[name] = (error as ActionCallError).apiError?.apiCode;
        }
      };
      await call("page", "history_page", {});
      await call("search", "history_search", { query: "first" });
      await call("events", "event_page", { event_types: ["message.received"] });
      await call("other thread event", "event_get", { event_id: "seed-1" });
      await call("whole", "history_page", { thread_id: null });
      await call("thread two", "history_page", { thread_id: "t2" });
      await call("search whole", "history_search", { query: "first", filters: { thread_id: null } });
      await call("other thread artifact", "artifact_metadata", { artifact_id: "made-in-t2" });
    },
  });
  await seed(stores);
  await stores.artifacts.register({
    artifact_id: "made-in-t2",
    artifact_type: "file",
    source: "runner",
    conversation_id: "own",
    thread_id: "t2",
    run_id: "an-earlier-run",
    metadata: {},
  });
  await collect(
    host.run({ ...message("third in thread one", "own"), thread_id: "t1" }, binding({ resource_policy })),
  );
  return { reads, context: contexts[0]!, audit: stores.audit.entries };
}

const contents = (answer: unknown) =>
  (answer as { items: { content?: string; input_summary?: string }[] }).items.map(
    (item) => item.content ?? item.input_summary,
  );

describe("history of a run in a thread, through the proxy", () => {
  it("pages, searches and lists events of the run's thread only, and refuses the rest", async () => {
    const { reads, context, audit } = await readsOf();
    expect(contents(reads.page)).toEqual([
      "third in thread one",
      "second in thread one",
      "first in thread one",
    ]);
    expect(contents(reads.search)).toEqual(["first in thread one"]);
    const eventIds = (reads.events as { items: { event_id: string }[] }).items.map((event) => event.event_id);
    expect(eventIds.slice(1)).toEqual(["seed-3", "seed-0"]);
    expect(eventIds[0]).toMatch(/^event-/);
    expect(reads["other thread event"]).toBe("not_found");
    expect(reads["other thread artifact"]).toBe("not_found");
    expect(reads.whole).toBe("unauthorized");
    expect(reads["thread two"]).toBe("unauthorized");
    expect(reads["search whole"]).toBe("unauthorized");
    // The context's cursor is the thread's newest item, and the audit names the thread read.
    expect(context.context).toMatchObject({ thread_id: "t1", has_history_before: true });
    expect(audit.find((entry) => entry.action === "history_page")?.resource).toBe(
      "conversation:own/thread:t1",
    );
  });

  it("reads the whole conversation, or another thread, when the binding grants the conversation", async () => {
    const { reads } = await readsOf({ history_scope: "conversation" });
    expect(contents(reads.page)).toEqual([
      "third in thread one",
      "second in thread one",
      "in the channel",
      "first in thread two",
      "first in thread one",
    ]);
    expect(contents(reads.whole)).toEqual(contents(reads.page));
    expect(contents(reads["thread two"])).toEqual(["first in thread two"]);
    expect(contents(reads["search whole"])).toEqual(["first in thread two", "first in thread one"]);
    expect(reads["other thread event"]).toMatchObject({ event_id: "seed-1", thread_id: "t2" });
    expect(reads["other thread artifact"]).toMatchObject({ artifact_id: "made-in-t2" });
  });
});
