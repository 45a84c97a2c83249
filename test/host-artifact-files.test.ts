import { createHash } from "node:crypto";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { appConfigSchema } from "../src/config/app-config-schema.js";
import type { KeelConfig } from "../src/config/keel-config.js";
import {
  ActionChannel,
  type AgentRunContextInput,
  createInMemoryTransportPair,
  createStdioTransport,
  FILE_CHUNK_ACTION,
  FILE_CHUNK_BYTES,
  FILE_TRANSFER_ERROR_CODES,
  type MessageTransport,
  receiveFiles,
  sendFile,
  serveKeelRunner,
  type WireProfile,
} from "../src/host/index.js";
import { BasePattern, Runtime, registerPlugin, type StepAction } from "../src/index.js";
import { attachForeign } from "./support/foreign-runtime.js";
import { collect, createTestHost, message, RUNNER_ID } from "./support/host-scenario.js";

/**
 * An artifact above 512 KiB goes from a Keel runner to its host as a `__file_chunk` transfer named by `file_key`
 * in `artifact.created`, not inline; the host stores it whole or not at all.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A pattern that makes one text artifact of the size its input names ("artifact 600000") and finishes. */
class ArtifactMaker extends BasePattern {
  async react(): Promise<StepAction> {
    const size = Number(/artifact (\d+)/.exec(this.context.inputText)?.[1] ?? 0);
    this.addArtifact({ name: "dump", kind: "report", payload: textOf(size) });
    return { type: "final", output: "made" };
  }
}
registerPlugin("pattern", "host_test_artifact_maker", () => () => new ArtifactMaker());

const CONFIG: KeelConfig = {
  agents: [{ id: "maker", name: "Maker", pattern: { type: "host_test_artifact_maker" } }],
};
const RUNNER = "plugin:keel/agents/maker";
const textOf = (size: number) => "artifact bytes, ".repeat(Math.ceil(size / 16)).slice(0, size);
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

async function servedRunner(transport: MessageTransport, profile: WireProfile = "seed") {
  const runtime = await Runtime.fromDict(CONFIG);
  const agents = appConfigSchema().parse(CONFIG).agents;
  const { channel } = serveKeelRunner({ runtime, agents, transport, profile });
  cleanups.push(async () => {
    await channel.close();
    await runtime.close();
  });
}

/** A Keel host and the maker runner over `pair`, asked for an artifact of `size` bytes. */
async function makeArtifact(size: number, pair: [MessageTransport, MessageTransport]) {
  const test = createTestHost();
  cleanups.push(() => test.host.close());
  await servedRunner(pair[1]);
  await test.host.attach(pair[0]);
  const results = await collect(
    test.host.run(message(`artifact ${size}`), { binding_id: "b", runner_id: RUNNER }),
  );
  const created = results.find((result) => result.type === "artifact.created");
  const data = created!.data as Record<string, unknown>;
  const stored = await test.stores.artifacts.get(String(data.artifact_id));
  const content = await test.stores.artifacts.read(String(data.artifact_id), { offset: 0, limit: 11 << 20 });
  return { results, data, stored, content, warnings: test.warnings };
}

describe("a Keel runner's large artifact", () => {
  it("goes as a file above 512 KiB, and is stored whole by the host", async () => {
    const size = 600 * 1024;
    const { results, data, stored, content } = await makeArtifact(size, createInMemoryTransportPair());
    expect(data.file_key).toMatch(/^[0-9a-f]{16}-[0-9a-f]{32}\.txt$/);
    expect(data.content_base64).toBeUndefined();
    expect(stored).toMatchObject({ size_bytes: size, sha256: sha256(textOf(size)), mime_type: "text/plain" });
    expect(Buffer.from(content!).toString()).toBe(textOf(size));
    expect(results.at(-1)!.type).toBe("run.completed");
  });

  it("stays inline at 512 KiB, and goes as metadata alone above the 10 MiB a receiver holds", async () => {
    const inline = await makeArtifact(512 * 1024, createInMemoryTransportPair());
    expect(inline.data.file_key).toBeUndefined();
    expect(Buffer.from(String(inline.data.content_base64), "base64").toString()).toBe(textOf(512 * 1024));
    const huge = (10 << 20) + 1;
    const omitted = await makeArtifact(huge, createInMemoryTransportPair());
    expect(omitted.data).toMatchObject({ size_bytes: huge, metadata: { content_omitted: "too_large" } });
    expect(omitted.data.file_key ?? omitted.data.content_base64).toBeUndefined();
    expect(omitted.stored).toMatchObject({ size_bytes: huge, sha256: sha256(textOf(huge)) });
    expect(omitted.content).toBeNull();
  });

  it("crosses the stdio framing: newline-delimited JSON, each chunk message under 16 KiB framed", async () => {
    const [toHost, toRunner] = [new PassThrough(), new PassThrough()];
    let written = "";
    toHost.on("data", (bytes: Buffer) => {
      written += bytes.toString();
    });
    const size = 700 * 1024;
    const { data, content } = await makeArtifact(size, [
      createStdioTransport({ input: toHost, output: toRunner }),
      createStdioTransport({ input: toRunner, output: toHost }),
    ]);
    expect(typeof data.file_key).toBe("string");
    expect(sha256(content!)).toBe(sha256(textOf(size)));
    // Each 16 KiB piece of the file is 22 KiB of base64: every __file_chunk message the runner wrote was framed.
    const lines = written.split("\n");
    expect(lines.filter((line) => line.includes('"chunk_start"'))).toHaveLength(
      Math.ceil(size / FILE_CHUNK_BYTES),
    );
    const unframed = lines.filter((line) => !line.startsWith('{"type":"chunk_'));
    expect(unframed.some((line) => line.includes(FILE_CHUNK_ACTION))).toBe(false);
  });

  /** The maker runner driven by a bare channel whose file receiver holds at most 64 KiB. */
  async function makeForBareHost(profile: WireProfile) {
    const [hostEnd, runnerEnd] = createInMemoryTransportPair();
    await servedRunner(runnerEnd, profile);
    const host = new ActionChannel({ transport: hostEnd });
    cleanups.push(() => host.close());
    const receiver = receiveFiles(host, { maxFileBytes: 64 * 1024 });
    const context: AgentRunContextInput = {
      run_id: "run-1",
      trigger: { type: "message.received", source: "host_adapter" },
      event: { event_id: "e", event_type: "message.received", source: "host_adapter", data: {} },
      input: { text: "artifact 600000" },
      delivery: { surface: "platform" },
      resources: {},
      runtime: { trace_id: "run-1" },
    };
    const request = { plugin_author: "keel", plugin_name: "agents", runner_name: "maker", context };
    const results: Record<string, unknown>[] = [];
    for await (const result of host.stream("run_agent", request)) results.push(result);
    return { results, receiver };
  }

  it("goes as metadata alone when the host refuses the transfer, saying why", async () => {
    const { results, receiver } = await makeForBareHost("seed");
    const created = results.find((result) => result.type === "artifact.created")!.data;
    expect(created).toMatchObject({
      size_bytes: 600_000,
      metadata: { content_omitted: FILE_TRANSFER_ERROR_CODES.TOO_LARGE },
    });
    expect(created).not.toHaveProperty("file_key");
    expect(results.at(-1)!.type).toBe("run.completed");
    // The refused transfer is held only as its failure, with no bytes.
    expect(receiver.held).toBe(1);
  });

  it("is not sent at all under a profile that drops artifacts", async () => {
    const { results, receiver } = await makeForBareHost("langbot-4.11");
    expect(results.map((result) => result.type)).not.toContain("artifact.created");
    expect(results.at(-1)!.type).toBe("run.completed");
    expect(receiver.held).toBe(0);
  });
});

describe("a host receiving an artifact as a file", () => {
  async function artifactsFrom(send: (runtime: ActionChannel) => Promise<Record<string, unknown>[]>) {
    const sent: Record<string, unknown>[] = [];
    const results: Record<string, unknown>[] = [];
    const test = await attachForeign({
      closers: cleanups,
      results,
      during: async (_context, runtime) => {
        for (const data of await send(runtime)) results.push({ type: "artifact.created", data });
        sent.push(...results);
      },
    });
    const run = await collect(test.host.run(message("hi"), { binding_id: "b", runner_id: RUNNER_ID }));
    const stored = await Promise.all(
      sent.map((result) =>
        test.stores.artifacts.get(String((result.data as { artifact_id: string }).artifact_id)),
      ),
    );
    return { run, stored, warnings: test.warnings };
  }

  it("stores a whole file, and drops a torn one, an oversize one, an unknown key and a wrong digest — nothing half stored", async () => {
    const bytes = Buffer.from(textOf(3 * FILE_CHUNK_BYTES));
    const { run, stored, warnings } = await artifactsFrom(async (runtime) => {
      const whole = await sendFile(runtime, bytes);
      const chunk = (key: string, length: number, index: number) =>
        runtime.call(FILE_CHUNK_ACTION, {
          file_key: key,
          file_length: length,
          chunk_base64: bytes
            .subarray(index * FILE_CHUNK_BYTES, (index + 1) * FILE_CHUNK_BYTES)
            .toString("base64"),
          chunk_index: index,
          chunk_amount: Math.ceil(length / FILE_CHUNK_BYTES),
        });
      await chunk("torn-1", bytes.length, 0);
      await expect(chunk("big-1", (10 << 20) + 1, 0)).rejects.toMatchObject({
        apiError: { apiCode: "payload_too_large", details: { code: FILE_TRANSFER_ERROR_CODES.TOO_LARGE } },
      });
      const again = await sendFile(runtime, bytes);
      const artifact = (id: string, extra: Record<string, unknown>) => ({
        artifact_id: id,
        artifact_type: "file",
        ...extra,
      });
      return [
        artifact("whole", { file_key: whole, sha256: sha256(bytes) }),
        artifact("torn", { file_key: "torn-1" }),
        artifact("big", { file_key: "big-1" }),
        artifact("unknown", { file_key: "never-sent" }),
        artifact("twice", { file_key: whole }),
        artifact("wrong digest", { file_key: again, sha256: sha256("something else") }),
        artifact("both", { file_key: again, content_base64: "AAAA" }),
      ];
    });
    expect(stored.map((record) => record?.artifact_id ?? null)).toEqual([
      "whole",
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(stored[0]).toMatchObject({ size_bytes: bytes.length, sha256: sha256(bytes) });
    expect(run.filter((result) => result.type === "artifact.created")).toHaveLength(1);
    const { TORN, TOO_LARGE, UNKNOWN } = FILE_TRANSFER_ERROR_CODES;
    const dropped = warnings.filter((warning) => warning.includes("dropped an artifact"));
    expect(
      dropped.map((warning) => [TORN, TOO_LARGE, UNKNOWN].find((code) => warning.includes(code))),
    ).toEqual([TORN, TOO_LARGE, UNKNOWN, UNKNOWN, TORN, undefined]);
    expect(dropped.at(-1)).toContain("both inline content and a file");
  });
});
