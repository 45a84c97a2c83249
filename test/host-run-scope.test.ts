import { afterEach, describe, expect, it } from "vitest";
import type { ActionCallError, RunGrant } from "../src/host/index.js";
import { attachForeign } from "./support/foreign-runtime.js";
import { binding, collect, message, typesOf } from "./support/host-scenario.js";
import { grantFor } from "./support/run-grant.js";

/**
 * The grant's third layer by default: a run gets what its own event may use — the binding's resources only
 * within the binding's bot or workspace, history of its own conversation unless the runner reads across and the
 * binding allows it, its own workspace's storage, and `event_*` platform actions only with a target — and the
 * `authorize` hook narrows from there.
 */

const closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("the default run scope", () => {
  it("grants a binding's resources only to events of its bot or workspace", () => {
    const scoped = { scope: { scope_type: "workspace" as const, scope_id: "w1" } };
    const inside = grantFor({ binding: scoped, event: { workspace_id: "w1" } });
    expect([...inside.models]).toEqual(["model-1"]);
    expect([...inside.tools]).toEqual(["lookup"]);
    const outside = grantFor({ binding: scoped, event: { workspace_id: "w2" } });
    expect(outside).toMatchObject({ pluginStorage: false, workspaceStorage: false });
    expect([outside.models, outside.tools, outside.platformActions].map((set) => set.size)).toEqual([
      0, 0, 0,
    ]);
    expect([...outside.conversations]).toEqual(["own"]);
    const bot = { scope: { scope_type: "bot" as const, scope_id: "bot-1" } };
    expect(grantFor({ binding: bot, event: { bot_id: "bot-1" } }).models.size).toBe(1);
    expect(grantFor({ binding: bot, event: { bot_id: "bot-2" } }).models.size).toBe(0);
    expect(grantFor({ binding: bot, event: {} }).models.size).toBe(0);
    // An unscoped (global) binding serves every event.
    expect(grantFor({ event: { workspace_id: "anywhere" } }).models.size).toBe(1);
  });

  it("keeps history to the run's own conversation unless the runner reads across and the binding allows it", () => {
    const extra = { resource_policy: { extra_history_conversations: ["other"] } };
    expect([...grantFor({ binding: extra }).conversations]).toEqual(["own"]);
    expect([...grantFor({ binding: extra, permissions: { history: ["page"] } }).conversations]).toEqual([
      "own",
      "other",
    ]);
    expect([...grantFor({ binding: extra, permissions: { events: ["get"] } }).conversations]).toEqual([
      "own",
      "other",
    ]);
    expect([...grantFor({ permissions: { history: ["page"] } }).conversations]).toEqual(["own"]);
    expect(
      grantFor({ binding: extra, permissions: { history: ["page"] }, event: { conversation_id: null } })
        .conversations.size,
    ).toBe(0);
  });

  it("grants workspace storage only for an event that names its workspace", () => {
    const allowed = { resource_policy: { allow_workspace_storage: true } };
    const permissions = { storage: ["plugin", "workspace"] };
    expect(grantFor({ binding: allowed, permissions, event: { workspace_id: "w1" } }).workspaceStorage).toBe(
      true,
    );
    const none = grantFor({ binding: allowed, permissions });
    expect(none).toMatchObject({ workspaceStorage: false, pluginStorage: true });
  });

  it("drops event_* platform actions for an event with no target, and keeps the binding's others", () => {
    const options = {
      permissions: { platform_api: ["event_reply", "platform_send"] },
      binding: { resource_policy: { allowed_platform_actions: ["event_reply", "platform_send"] } },
    };
    expect([...grantFor(options).platformActions]).toEqual(["event_reply", "platform_send"]);
    expect([...grantFor({ ...options, event: { conversation_id: null } }).platformActions]).toEqual([
      "platform_send",
    ]);
    const replyTarget = {
      conversation_id: null,
      delivery: { surface: "platform", reply_target: { message_id: "m" } },
    };
    expect([...grantFor({ ...options, event: replyTarget }).platformActions]).toEqual([
      "event_reply",
      "platform_send",
    ]);
  });

  it("hands the authorize hook the narrowed grant", () => {
    let seen: RunGrant | undefined;
    const granted = grantFor({
      binding: { resource_policy: { extra_history_conversations: ["other"] } },
      authorize: (grant) => {
        seen = grant;
        return { ...grant, tools: new Set() };
      },
    });
    expect([...seen!.conversations]).toEqual(["own"]);
    expect(granted.tools.size).toBe(0);
    expect(granted.models.size).toBe(1);
  });
});

describe("the run scope, end to end", () => {
  it("a run outside its binding's workspace is told of no resources and refused at the proxy", async () => {
    const refusals: string[] = [];
    const { host, contexts } = await attachForeign({
      closers,
      manifest: { permissions: { models: ["invoke"], storage: ["workspace"] } },
      during: async (context, runtime) => {
        for (const [action, data] of [
          ["invoke_llm", { llm_model_uuid: "model-1", messages: [{ role: "user", content: "hi" }] }],
          ["get_workspace_storage", { key: "k" }],
        ] as const) {
          try {
            await runtime.call(action, { run_id: context.run_id, ...data });
            refusals.push(`${action}: allowed`);
          } catch (error) {
            refusals.push(`${action}: ${(error as ActionCallError).apiError?.apiCode}`);
          }
        }
      },
    });
    const scoped = binding({
      scope: { scope_type: "workspace", scope_id: "w1" },
      resource_policy: { allowed_model_uuids: ["model-1"], allow_workspace_storage: true },
    });
    const results = await collect(host.run({ ...message("hi"), workspace_id: "w2" }, scoped));
    expect(typesOf(results)).toEqual(["run.completed"]);
    expect(contexts[0]!.resources).toMatchObject({
      models: [],
      storage: { plugin_storage: false, workspace_storage: false },
    });
    expect(refusals).toEqual(["invoke_llm: unauthorized", "get_workspace_storage: unauthorized"]);

    refusals.length = 0;
    await collect(host.run({ ...message("hi"), workspace_id: "w1" }, scoped));
    expect(contexts[1]!.resources.models.map((model) => model.model_id)).toEqual(["model-1"]);
    expect(refusals).toEqual(["invoke_llm: allowed", "get_workspace_storage: allowed"]);
  });
});
