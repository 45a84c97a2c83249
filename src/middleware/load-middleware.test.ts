import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Next } from "../contracts/middleware.js";
import { PluginLoadError } from "../errors/error-classes.js";
import { unregisterPlugin } from "../plugins/plugin-registry.js";
import { registerPlugin } from "../runtime/seam-registries.js";
import { loadMiddleware } from "./load-middleware.js";
import { NO_MIDDLEWARE } from "./middleware-chain.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "keel-load-middleware-"));
  await writeFile(
    path.join(dir, "middleware.mjs"),
    [
      "export let loaded = 0;",
      "export async function tag(ctx, next) { ctx.log.push('tag'); await next(); }",
      "export class Prefix {",
      "  constructor(config) { this.prefix = config.prefix; }",
      "  async process(ctx, next) { ctx.log.push(this.prefix); await next(); }",
      "}",
      "export const counter = { calls: 0, async process(ctx, next) { this.calls++; ctx.log.push('counter'); await next(); } };",
      "export const notMiddleware = 42;",
    ].join("\n"),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(chain: { run(ctx: unknown, callee: () => void): Promise<void> }): Promise<string[]> {
  const ctx = { log: [] as string[] };
  await chain.run(ctx, () => {
    ctx.log.push("callee");
  });
  return ctx.log;
}

describe("loadMiddleware", () => {
  it("gives the shared empty stack when nothing is configured", async () => {
    expect(await loadMiddleware(undefined, { baseDir: dir, label: "agents[a]" })).toBe(NO_MIDDLEWARE);
    expect(await loadMiddleware({ chat: [] }, { baseDir: dir, label: "agents[a]" })).toBe(NO_MIDDLEWARE);
  });

  it("uses an impl's exported function as the middleware, constructs a class with the config, keeps an object", async () => {
    const stack = await loadMiddleware(
      {
        function: [
          { impl: "./middleware.mjs#tag", config: {} },
          { impl: "./middleware.mjs#Prefix", config: { prefix: "configured" } },
          { impl: "./middleware.mjs#counter", config: {} },
        ],
      },
      { baseDir: dir, label: "agents[a]" },
    );
    expect([stack.agent.length, stack.chat.length, stack.function.length]).toEqual([0, 0, 3]);
    expect(await run(stack.function as never)).toEqual(["tag", "configured", "counter", "callee"]);
  });

  it("keeps middleware given in code, in order, at each level", async () => {
    const log: string[] = [];
    const fn = async (_ctx: unknown, next: Next) => {
      log.push("fn");
      await next();
    };
    const object = {
      async process(_ctx: unknown, next: Next) {
        log.push("object");
        await next();
      },
    };
    const stack = await loadMiddleware(
      { agent: [fn], chat: [object, fn] },
      { baseDir: dir, label: "agents[a]" },
    );
    await run(stack.chat as never);
    expect(log).toEqual(["object", "fn"]);
    expect(stack.agent.length).toBe(1);
  });

  it("builds a registered type with its factory and the ref's config", async () => {
    registerPlugin("middleware", "test_greeting", (config) => async (ctx: unknown, next: Next) => {
      (ctx as unknown as { log: string[] }).log.push(`hello ${String(config.name)}`);
      await next();
    });
    try {
      const stack = await loadMiddleware(
        { agent: [{ type: "test_greeting", config: { name: "Ada" } }] },
        { baseDir: dir, label: "agents[a]" },
      );
      expect(await run(stack.agent as never)).toEqual(["hello Ada", "callee"]);
    } finally {
      unregisterPlugin("middleware", "test_greeting");
    }
  });

  it("refuses what is not middleware, and an unknown type with a near match", async () => {
    const notMiddleware = loadMiddleware(
      { chat: [{ impl: "./middleware.mjs#notMiddleware", config: {} }] },
      { baseDir: dir, label: "agents[a]" },
    );
    await expect(notMiddleware).rejects.toBeInstanceOf(PluginLoadError);
    await expect(notMiddleware).rejects.toThrow("agents[a].middleware.chat[0]: not middleware");
    registerPlugin("middleware", "test_retry", () => async (_ctx: unknown, next: Next) => next());
    try {
      const unknown = loadMiddleware(
        { function: [{ type: "test_retyr", config: {} }] },
        { baseDir: dir, label: "agents[a]" },
      );
      await expect(unknown).rejects.toMatchObject({
        message: 'agents[a].middleware.function[0]: unknown middleware type "test_retyr"',
        hint: expect.stringContaining('Did you mean "test_retry"?'),
      });
    } finally {
      unregisterPlugin("middleware", "test_retry");
    }
  });
});
