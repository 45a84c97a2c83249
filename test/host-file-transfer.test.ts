import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ActionCallError,
  ActionChannel,
  createInMemoryTransportPair,
  FILE_CHUNK_ACTION,
  FILE_CHUNK_BYTES,
  FILE_TRANSFER_ERROR_CODES,
  FileTransferError,
  receiveFiles,
  sendFile,
} from "../src/host/index.js";
import { binding, collect, createTestHost, message } from "./support/host-scenario.js";
import { langBotErrors } from "./support/langbot-schemas.js";
import { apiCodeOf, attachScriptedRuntime, RUNNER } from "./support/scripted-runtime.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function channels() {
  const [left, right] = createInMemoryTransportPair();
  const a = new ActionChannel({ transport: left });
  const b = new ActionChannel({ transport: right });
  cleanups.push(() => a.close());
  return { a, b };
}

const chunk = (fileKey: string, bytes: Buffer, [index, length]: [number, number]) => ({
  file_key: fileKey,
  file_length: length,
  chunk_base64: bytes.toString("base64"),
  chunk_index: index,
  chunk_amount: Math.max(1, Math.ceil(length / FILE_CHUNK_BYTES)),
  chunk_size: bytes.length,
});

async function failureOf(call: Promise<unknown>) {
  const error = (await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )) as ActionCallError;
  return { apiCode: error.apiError?.apiCode, code: error.apiError?.details.code };
}

function takeError(take: () => unknown): string | undefined {
  try {
    take();
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(FileTransferError);
    return (error as FileTransferError).code;
  }
}

describe("__file_chunk transfer", () => {
  it("carries files both ways in 16 KiB chunks, whole and in order, an empty one too", async () => {
    // Messages of at most 30,000 bytes: a 40 KiB file only passes cut into chunks.
    const [left, right] = createInMemoryTransportPair({ limits: { maxMessageBytes: 30_000 } });
    const a = new ActionChannel({ transport: left });
    const b = new ActionChannel({ transport: right });
    cleanups.push(() => a.close());
    const toB = receiveFiles(b);
    const toA = receiveFiles(a);
    const big = randomBytes(2 * FILE_CHUNK_BYTES + 1234);
    const keyToB = await sendFile(a, big, { extension: "bin" });
    expect(keyToB).toMatch(/^[0-9a-f]{16}-[0-9a-f]{32}\.bin$/);
    expect(Buffer.from(toB.take(keyToB)).equals(big)).toBe(true);
    // Taken once: a second take finds nothing.
    expect(takeError(() => toB.take(keyToB))).toBe(FILE_TRANSFER_ERROR_CODES.UNKNOWN);

    const back = randomBytes(FILE_CHUNK_BYTES);
    const keyToA = await sendFile(b, back);
    expect(Buffer.from(toA.take(keyToA)).equals(back)).toBe(true);
    const empty = await sendFile(b, new Uint8Array(0));
    expect(toA.take(empty)).toHaveLength(0);
    expect(toA.held + toB.held).toBe(0);
  });

  it("refuses a file over the receiver's bound at its first chunk, with a typed error on both sides", async () => {
    const { a, b } = channels();
    const receiver = receiveFiles(b, { maxFileBytes: 20_000 });
    const error = await sendFile(a, randomBytes(20_001)).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(FileTransferError);
    expect((error as FileTransferError).code).toBe(FILE_TRANSFER_ERROR_CODES.TOO_LARGE);
    expect(takeError(() => receiver.take((error as FileTransferError).fileKey!))).toBe(
      FILE_TRANSFER_ERROR_CODES.TOO_LARGE,
    );
    const fine = await sendFile(a, randomBytes(20_000));
    expect(receiver.take(fine)).toHaveLength(20_000);
  });

  it("refuses a chunk out of order, tears nothing silently, and accepts the whole file sent again", async () => {
    const { a, b } = channels();
    const receiver = receiveFiles(b);
    const file = randomBytes(3 * FILE_CHUNK_BYTES);
    const piece = (index: number) => file.subarray(index * FILE_CHUNK_BYTES, (index + 1) * FILE_CHUNK_BYTES);
    // Chunk 1 before chunk 0.
    expect(await failureOf(a.call(FILE_CHUNK_ACTION, chunk("k1", piece(1), [1, file.length])))).toEqual({
      apiCode: "invalid_argument",
      code: FILE_TRANSFER_ERROR_CODES.OUT_OF_ORDER,
    });
    // Chunk 0, then chunk 2 skipping 1: the transfer is dropped, and taking it says why.
    await a.call(FILE_CHUNK_ACTION, chunk("k2", piece(0), [0, file.length]));
    expect(await failureOf(a.call(FILE_CHUNK_ACTION, chunk("k2", piece(2), [2, file.length])))).toEqual({
      apiCode: "invalid_argument",
      code: FILE_TRANSFER_ERROR_CODES.OUT_OF_ORDER,
    });
    expect(await failureOf(a.call(FILE_CHUNK_ACTION, chunk("k2", piece(1), [1, file.length])))).toMatchObject(
      {
        code: FILE_TRANSFER_ERROR_CODES.OUT_OF_ORDER,
      },
    );
    expect(takeError(() => receiver.take("k2"))).toBe(FILE_TRANSFER_ERROR_CODES.OUT_OF_ORDER);
    // A transfer that stops half-way is torn.
    await a.call(FILE_CHUNK_ACTION, chunk("k3", piece(0), [0, file.length]));
    expect(takeError(() => receiver.take("k3"))).toBe(FILE_TRANSFER_ERROR_CODES.TORN);
    // Sent again from chunk 0, in order, it arrives whole.
    for (const index of [0, 1, 2])
      await a.call(FILE_CHUNK_ACTION, chunk("k2", piece(index), [index, file.length]));
    expect(Buffer.from(receiver.take("k2")).equals(file)).toBe(true);
  });

  it("refuses chunks that are not what they say, and more transfers than it holds", async () => {
    const { a, b } = channels();
    const receiver = receiveFiles(b, { maxTransfers: 2 });
    const one = randomBytes(10);
    const refusals = [
      { ...chunk("../etc/passwd", one, [0, 10]) },
      { ...chunk("k", one, [0, 10]), chunk_base64: "not base64!" },
      { ...chunk("k", one, [0, 10]), chunk_size: 11 },
      { ...chunk("k", one, [0, 10]), chunk_amount: 2 },
      { ...chunk("k", one, [0, 11]) },
      { ...chunk("k", randomBytes(FILE_CHUNK_BYTES + 3), [0, FILE_CHUNK_BYTES + 3]), chunk_amount: 1 },
      { ...chunk("k", one, [0, 10]), chunk_index: 1 },
      // A chunk over 16 KiB, in a file that would need two.
      { ...chunk("k", randomBytes(FILE_CHUNK_BYTES + 3), [0, 2 * FILE_CHUNK_BYTES]) },
    ];
    for (const data of refusals) {
      expect(await failureOf(a.call(FILE_CHUNK_ACTION, data)), JSON.stringify(data).slice(0, 80)).toEqual({
        apiCode: "invalid_argument",
        code: FILE_TRANSFER_ERROR_CODES.BAD_CHUNK,
      });
    }
    expect(takeError(() => receiver.take("k"))).toBe(FILE_TRANSFER_ERROR_CODES.BAD_CHUNK);
    await sendFile(a, one);
    await sendFile(a, one);
    const busy = await sendFile(a, one).catch((thrown: unknown) => thrown);
    expect((busy as FileTransferError).code).toBe(FILE_TRANSFER_ERROR_CODES.BUSY);
    expect(receiver.held).toBe(2);
  });
});

describe("files between a host and its runner", () => {
  function hostWithFiles() {
    const config = randomBytes(40_000);
    const test = createTestHost({
      files: {
        "cfg-1": { kind: "config", name: "prompts.yaml", mimeType: "text/yaml", read: async () => config },
        "kb-file": { kind: "knowledge", name: "manual.pdf", read: async () => randomBytes(10) },
        other: { kind: "config", name: "other.yaml", read: async () => randomBytes(10) },
      },
    });
    cleanups.push(() => test.host.close());
    return { ...test, config };
  }

  it("sends a granted file to the runner in chunks, and refuses one outside the grant, auditing each call", async () => {
    const test = hostWithFiles();
    const scripted = await attachScriptedRuntime(test.host, { files: ["config"], storage: ["plugin"] });
    const running = collect(
      test.host.run(
        message("hi"),
        binding({ runner_id: RUNNER, resource_policy: { allowed_file_ids: ["cfg-1", "kb-file"] } }),
      ),
    );
    await expect.poll(() => scripted.runs.length).toBe(1);
    const { context, api, release } = scripted.runs[0]!;
    // The knowledge file needs `files: ["knowledge"]`, which the manifest does not ask for.
    expect(context.resources.files).toEqual([
      { file_id: "cfg-1", file_name: "prompts.yaml", mime_type: "text/yaml", source: "config" },
    ]);
    expect(langBotErrors("AgentRunContext", context)).toEqual([]);
    const file = await api.files.get("cfg-1");
    expect(Buffer.from(file.bytes).equals(test.config)).toBe(true);
    expect(file).toMatchObject({ name: "prompts.yaml", mimeType: "text/yaml" });
    expect(await apiCodeOf(api.files.get("kb-file"))).toBe("unauthorized");
    expect(await apiCodeOf(api.files.get("other"))).toBe("unauthorized");
    expect(await apiCodeOf(api.files.get("no-such-file"))).toBe("unauthorized");

    // The other way: a stored value too large for one request goes to the host as a file first.
    const value = randomBytes(700 * 1024);
    await api.storage.set("plugin", "blob", value);
    expect(Buffer.from((await test.stores.storage.get("plugin:test/scripted", "blob"))!).equals(value)).toBe(
      true,
    );
    const small = await api.storage.get("plugin", "blob");
    expect(Buffer.from(String(small.value_base64), "base64").equals(value)).toBe(true);
    // A key the runner never sent is refused, not stored as nothing.
    expect(
      await apiCodeOf(
        scripted.channel.call("set_plugin_storage", {
          run_id: context.run_id,
          key: "x",
          file_key: "never-sent",
        }),
      ),
    ).toBe("invalid_argument");
    release();
    await running;
    const audited = test.stores.audit.entries.map((entry) => [entry.action, entry.resource, entry.result]);
    expect(audited).toEqual([
      ["get_file", "file:cfg-1", "ok"],
      ["get_file", "file:kb-file", "unauthorized"],
      ["get_file", "file:other", "unauthorized"],
      ["get_file", "file:no-such-file", "unauthorized"],
      ["set_plugin_storage", "plugin:blob", "ok"],
      ["get_plugin_storage", "plugin:blob", "ok"],
      ["set_plugin_storage", "plugin:x", "invalid_argument"],
    ]);
  });
});
