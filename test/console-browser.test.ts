import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Message, Runtime } from "../src/index.js";
import { type KeelServer, serveKeel } from "../src/server/index.js";
import { type ScriptStep, scriptedModel } from "../src/testing/index.js";
import { useBuiltConsole } from "./support/cli-process.js";
import { repoRoot } from "./support/compile-for-children.js";

/**
 * The web console in headless Chromium against a real server with a token: open it, chat and watch a tool call
 * land on the timeline, approve a suspended call in place, reload mid-run and see the run go on with every event
 * once, open a finished run and one of its checkpoints. Each screen is saved under test-artifacts/console/.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const TOKEN = "console-test-token";
const SHOTS = join(repoRoot, "test-artifacts", "console");

if (!existsSync(CHROMIUM))
  console.warn(`console-browser.test.ts is skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

const toolResults = (messages: readonly Message[]) => messages.filter((message) => message.role === "tool");

/** Eight slow ticks, then an answer: a run long enough to reload in the middle of. */
const slowTicks: ScriptStep = ({ messages }) =>
  toolResults(messages).length < 8
    ? { toolCalls: [{ name: "tick", arguments: { n: toolResults(messages).length } }], delayMs: 60 }
    : { deltas: ["All ", "eight ", "ticks ", "done."] };

const payOnce: ScriptStep = ({ messages }) =>
  toolResults(messages).length === 0
    ? {
        toolCalls: [{ id: "pay-1", name: "pay", arguments: { invoice: "INV-2024-118", amount: 420 } }],
        usage: { inputTokens: 812, outputTokens: 36 },
      }
    : { deltas: ["Paid ", "invoice INV-2024-118: ", "$420."], usage: { inputTokens: 901, outputTokens: 18 } };

async function startServer(): Promise<{ runtime: Runtime; server: KeelServer }> {
  const tick = defineTool({
    name: "tick",
    description: "Wait a moment",
    inputSchema: z.object({ n: z.number() }),
    execute: async ({ n }) => {
      await new Promise((resolve) => setTimeout(resolve, 250));
      return { tick: n };
    },
  });
  const lookup = defineTool({
    name: "lookup_weather",
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: ({ city }) => ({
      city,
      conditions: "sunny",
      temperatureC: 24,
      hourly: Array.from({ length: 24 }, (_, hour) => ({
        hour,
        temperatureC: 16 + Math.round(8 * Math.sin(hour / 4)),
      })),
    }),
  });
  const pay = defineTool({
    name: "pay",
    description: "Pay an invoice (needs approval)",
    inputSchema: z.object({ invoice: z.string(), amount: z.number() }),
    approvalMode: "always",
    execute: ({ invoice, amount }) => ({ paid: invoice, amount }),
  });
  const runtime = await Runtime.fromDict({
    agents: [
      {
        id: "weather",
        name: "Weather assistant",
        tools: [lookup],
        llm: {
          provider: "mock",
          model: "mock-weather",
          pricing: { input: 3, output: 15 },
          script: [
            {
              toolCalls: [{ name: "lookup_weather", arguments: { city: "Lisbon" } }],
              usage: { inputTokens: 1240, outputTokens: 42 },
              delayMs: 120,
            },
            {
              deltas: ["It is ", "sunny in Lisbon, ", "24 °C, ", "with a light breeze from the west."],
              usage: { inputTokens: 1630, outputTokens: 25 },
              delayMs: 80,
            },
          ],
        },
      },
      {
        id: "drafts",
        name: "Draft writer",
        llm: scriptedModel([{ error: { type: "response", message: "The model's answer was cut off" } }], {
          whenExhausted: "repeat-last",
        }),
      },
      {
        id: "payments",
        name: "Payments",
        tools: [pay],
        llm: scriptedModel([payOnce], { whenExhausted: "repeat-last" }),
      },
      {
        id: "ticker",
        name: "Ticker",
        tools: [tick],
        llm: scriptedModel([slowTicks], { whenExhausted: "repeat-last" }),
      },
    ],
  });
  const server = await serveKeel(runtime, { port: 0, token: TOKEN, console: true });
  return { runtime, server };
}

/** The events the page shows for its latest turn's run: each of the run's sequences, once, in order. */
async function expectEachEventOnce(page: Page, runtime: Runtime): Promise<void> {
  const runId = (await page.locator(".turn").last().getAttribute("data-run-id"))!;
  const record = (await runtime.getRun(runId))!;
  await page.click('.inspector [role="tab"]:has-text("Events")');
  const sequences = await page.$$eval('[data-testid="events"] li', (items) =>
    items.map((item) => Number(item.getAttribute("data-seq"))),
  );
  expect(sequences).toEqual(Array.from({ length: record.lastSequence }, (_, index) => index + 1));
  await page.click('.inspector [role="tab"]:has-text("Timeline")');
}

/** Record the `Last-Event-ID` of each request for a run's events. */
function eventRequests(page: Page): { ids: string[]; stop: () => void } {
  const ids: string[] = [];
  const listen = (request: { url(): string; headers(): Record<string, string> }) => {
    if (request.url().endsWith("/events")) ids.push(request.headers()["last-event-id"] ?? "");
  };
  page.on("request", listen);
  return { ids, stop: () => page.off("request", listen) };
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`) });

async function send(page: Page, text: string): Promise<void> {
  await page.fill(".composer textarea", text);
  await page.keyboard.press("Enter");
}

describe.skipIf(!existsSync(CHROMIUM))("the web console in Chromium", () => {
  let runtime: Runtime;
  let server: KeelServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  useBuiltConsole();
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    ({ runtime, server } = await startServer());
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
    page.on("console", (message) => {
      // Chromium logs the 401 of the wrong token the first test types, and the stream the dropped server cut.
      const expected = /401|ERR_INCOMPLETE_CHUNKED_ENCODING|ERR_CONNECTION_REFUSED/;
      if (message.type() === "error" && !expected.test(message.text())) pageErrors.push(message.text());
    });
    page.on("pageerror", (error) => pageErrors.push(error.message));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await runtime?.close();
  });

  it("asks for the token, then keeps it for the tab; loads small and fast", async () => {
    await page.goto(`${server.url}/`);
    await page.waitForSelector(".gate-card");
    await shot(page, "0-token");
    await page.fill(".gate-card input", "wrong-token");
    await page.click(".gate-card button");
    await page.waitForSelector(".gate-card .error-box");
    // `?token=` is taken once and leaves the address. A fresh context: nothing cached, as a first visit.
    const fresh = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await fresh.goto(`${server.url}/?token=${TOKEN}#/chat/weather`);
    await fresh.waitForSelector(".sidebar .nav-item");
    expect(fresh.url()).not.toContain("token");
    // Run in the page (the test's own types have no DOM): what the first visit transferred, and when it painted.
    const figures = (await fresh.evaluate(`(() => {
      const navigation = performance.getEntriesByType("navigation")[0];
      const assets = performance.getEntriesByType("resource").filter((entry) => /\\/assets\\//.test(entry.name));
      const sum = (field) => navigation[field] + assets.reduce((total, entry) => total + entry[field], 0);
      const paint = performance.getEntriesByName("first-contentful-paint")[0];
      return {
        transferred: sum("transferSize"),
        encoded: sum("encodedBodySize"),
        decoded: sum("decodedBodySize"),
        firstContentfulPaint: paint ? paint.startTime : null,
        domContentLoaded: navigation.domContentLoadedEventEnd,
      };
    })()`)) as {
      transferred: number;
      encoded: number;
      decoded: number;
      firstContentfulPaint: number | null;
      domContentLoaded: number;
    };
    await fresh.close();
    console.log(
      `console page, first visit: ${(figures.transferred / 1024).toFixed(1)} KB transferred ` +
        `(${(figures.encoded / 1024).toFixed(1)} KB gzip bodies, ${(figures.decoded / 1024).toFixed(1)} KB unpacked); ` +
        `first contentful paint ${figures.firstContentfulPaint?.toFixed(0)} ms, DOMContentLoaded ${figures.domContentLoaded.toFixed(0)} ms on loopback`,
    );
    expect(figures.transferred).toBeGreaterThan(0);
  });

  it("chats: the answer streams in and the tool call lands on the timeline, its large result folded", async () => {
    await page.goto(`${server.url}/?token=${TOKEN}#/chat/weather`);
    await send(page, "What's the weather in Lisbon?");
    await page.waitForSelector('.tl-row[data-kind="tool"][data-label="lookup_weather"]');
    await page.waitForSelector('[data-testid="run-summary"][data-phase="finished"]');
    expect(await page.textContent('[data-testid="answer"] .answer-text')).toBe(
      "It is sunny in Lisbon, 24 °C, with a light breeze from the west.",
    );
    expect(await page.locator('.tl-row[data-kind="model"]').count()).toBe(2);
    await page.click('.tl-row[data-kind="tool"]');
    await page.waitForSelector(".tl-detail .json-folded");
    await shot(page, "1-chat");
  });

  it("approves a suspended call in place, always for the run, and the run goes on", async () => {
    await page.goto(`${server.url}/?token=${TOKEN}#/chat/payments`);
    await send(page, "Pay the October invoice");
    await page.waitForSelector('[data-testid="approval"][data-tool-call-id="pay-1"]');
    await page.waitForSelector('.tl-row[data-kind="suspension"]');
    await shot(page, "2-approval");
    await page.selectOption('[data-testid="approval"] select', "run");
    await page.click('[data-testid="approval"] .button.approve');
    await page.waitForSelector('[data-testid="run-summary"][data-phase="finished"]');
    expect(await page.locator('[data-testid="approval"]').count()).toBe(0);
    expect(await page.textContent('[data-testid="answer"] .answer-text')).toBe(
      "Paid invoice INV-2024-118: $420.",
    );
    expect(await page.getAttribute('.tl-row[data-kind="decision"]', "data-label")).toBe("approve pay");
    await shot(page, "3-approved");
  });

  it("reloads mid-run and follows the run on from Last-Event-ID, every event once", async () => {
    await page.goto(`${server.url}/?token=${TOKEN}#/chat/ticker`);
    await send(page, "Tick eight times");
    await page.locator('.tl-row[data-kind="tool"]').nth(2).waitFor();
    const requests = eventRequests(page);
    await page.reload();
    // The run was not over when the page came back.
    await page.waitForSelector('[data-testid="run-summary"][data-phase="running"]');
    await page.waitForSelector('[data-testid="run-summary"][data-phase="finished"]');
    requests.stop();
    // The reloaded page asked only for what it did not hold.
    expect(requests.ids.length).toBeGreaterThan(0);
    expect(Number(requests.ids[0])).toBeGreaterThan(0);
    await expectEachEventOnce(page, runtime);
    expect(await page.textContent('[data-testid="answer"] .answer-text')).toBe("All eight ticks done.");
    await shot(page, "4-reloaded");
  });

  it("re-attaches after the connection drops, from the last event it holds", async () => {
    await page.goto(`${server.url}/?token=${TOKEN}#/chat/ticker`);
    await page.click('button:has-text("New conversation")');
    await send(page, "Tick eight times");
    await page.locator('.tl-row[data-kind="tool"]').nth(1).waitFor();
    const requests = eventRequests(page);
    // Every connection ends; the run goes on in the runtime, and a server on the same port takes the page back.
    const port = server.port;
    await server.close();
    await page.waitForSelector(".reconnecting");
    await shot(page, "5-reconnecting");
    server = await serveKeel(runtime, { port, token: TOKEN, console: true });
    await page.waitForSelector('[data-testid="run-summary"][data-phase="finished"]');
    requests.stop();
    expect(Number(requests.ids.at(-1))).toBeGreaterThan(0);
    await expectEachEventOnce(page, runtime);
    expect(await page.locator(".reconnecting").count()).toBe(0);
  });

  it("shows a failed run's error", async () => {
    await page.goto(`${server.url}/?token=${TOKEN}#/chat/drafts`);
    await send(page, "Draft a reply to the landlord");
    await page.waitForSelector('[data-testid="run-summary"][data-phase="finished"]');
    expect(await page.textContent('[data-testid="answer"] .error-box')).toContain(
      "The model's answer was cut off",
    );
    expect(await page.getAttribute('[data-testid="run-summary"] .badge', "data-status")).toBe("failed");
    await page.waitForSelector('.tl-row[data-kind="error"]');
    await page.click('.tl-row[data-kind="error"]');
    await shot(page, "6-failed");
  });

  it("lists runs by agent, opens a finished run, its checkpoint and its policy", async () => {
    await page.goto(`${server.url}/?token=${TOKEN}#/runs`);
    await page.waitForSelector('[data-testid="runs"] tbody tr');
    expect(await page.locator('[data-testid="runs"] tbody tr').count()).toBe(
      (await runtime.listRuns()).length,
    );
    await shot(page, "7-runs");
    await page.selectOption(".filters select >> nth=0", "payments");
    await expect.poll(() => page.locator('[data-testid="runs"] tbody tr').count()).toBe(1);
    await page.click('[data-testid="runs"] tbody tr');
    await page.waitForSelector('[data-testid="run-summary"][data-phase="finished"]');
    await page.waitForSelector('.tl-row[data-kind="decision"]');
    // The run shows what it was asked, from its record.
    expect(await page.textContent('[data-testid="run-input"] .message-text')).toBe("Pay the October invoice");
    await shot(page, "8-run");
    await page.click('[role="tab"]:has-text("Checkpoints")');
    await page.waitForSelector('[data-testid="checkpoints"] .checkpoint');
    await page.click('[data-testid="checkpoints"] .checkpoint-head');
    await page.waitForSelector(".checkpoint.open .checkpoint-body");
    expect(await page.textContent(".checkpoint.open code")).toContain(":step:");
    await shot(page, "9-checkpoint");
    await page.click('[role="tab"]:has-text("Policy")');
    await page.waitForSelector('[data-testid="policy"] table');
    expect(await page.textContent('[data-testid="policy"]')).toContain("tool.approval_mode:pay");
    await shot(page, "10-policy");
  });

  it("branches a new run from a checkpoint, which waits again and is approved on its own page", async () => {
    await page.goto(`${server.url}/?token=${TOKEN}#/runs`);
    await page.selectOption(".filters select >> nth=0", "payments");
    await expect.poll(() => page.locator('[data-testid="runs"] tbody tr').count()).toBe(1);
    const parent = (await page.getAttribute('[data-testid="runs"] tbody tr', "data-run-id"))!;
    await page.click('[data-testid="runs"] tbody tr');
    await page.click('[role="tab"]:has-text("Checkpoints")');
    await page.click('[data-testid="checkpoints"] .checkpoint-head');
    await page.click('.checkpoint.open button:has-text("Branch")');
    await page.waitForURL((url) => url.hash.startsWith("#/runs/") && !url.hash.includes(parent));
    // The branch starts where the parent waited: at the call to approve.
    await page.waitForSelector('[data-testid="approval"]');
    expect(page.url()).not.toContain(parent);
    const child = decodeURIComponent(page.url().split("#/runs/")[1]!);
    expect((await runtime.getRun(child))?.parentRunId).toBe(parent);
    await page.waitForSelector(`.subtitle a[href="#/runs/${parent}"]`);
    // A branch asks nothing new: it shows the input of the run it branched from.
    expect(await page.textContent('[data-testid="run-input"] .message-text')).toBe("Pay the October invoice");
    await shot(page, "11-branch");
    await page.click('[data-testid="approval"] .button.approve');
    await page.waitForSelector('[data-testid="run-summary"][data-phase="finished"]');
    expect(await page.textContent(".answer-card .answer-text")).toBe("Paid invoice INV-2024-118: $420.");
    expect(pageErrors).toEqual([]);
  });
});
