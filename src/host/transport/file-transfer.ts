import { createHash, randomUUID } from "node:crypto";
import { KeelError } from "../../errors/keel-error.js";
import { AGENT_API_ERROR_CODES, AgentApiError } from "../wire/api-error.js";
import type { ActionChannel } from "./action-channel.js";
import { ActionCallError } from "./channel-errors.js";

/** The internal action that carries one piece of a file. */
export const FILE_CHUNK_ACTION = "__file_chunk";
/** Bytes of file in one `__file_chunk`, before base64. */
export const FILE_CHUNK_BYTES = 16 * 1024;
/** The largest file a receiver accepts by default: the size of a stored blob. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;

export const FILE_TRANSFER_ERROR_CODES = {
  /** The file is over the receiver's size bound. */
  TOO_LARGE: "host.file_too_large",
  /** A chunk came with an index other than the next one expected. */
  OUT_OF_ORDER: "host.file_chunk_out_of_order",
  /** A chunk whose fields do not add up: bad key, bad base64, a size that is not what it says. */
  BAD_CHUNK: "host.file_chunk_invalid",
  /** The transfer stopped before its last chunk, or broke on the way. */
  TORN: "host.file_transfer_torn",
  /** No transfer under that key. */
  UNKNOWN: "host.file_not_found",
  /** Too many transfers held at once. */
  BUSY: "host.file_transfers_busy",
} as const;

/** A file transfer that was refused, broke, or is not there. */
export class FileTransferError extends KeelError {
  readonly fileKey: string | undefined;
  constructor(code: string, message: string, fileKey?: string) {
    super(message, {
      code,
      hint:
        code === FILE_TRANSFER_ERROR_CODES.TOO_LARGE
          ? "Send a smaller file, or raise the receiver's maxFileBytes"
          : "Send the whole file again, chunks in order from index 0",
    });
    this.fileKey = fileKey;
  }
}

export interface FileReceiverOptions {
  /** The largest file accepted, in bytes; 10 MiB. */
  maxFileBytes?: number;
  /** Transfers held at once, in progress or received and not yet taken; 16. */
  maxTransfers?: number;
}

interface Transfer {
  length: number;
  amount: number;
  next: number;
  received: number;
  chunks: Buffer[];
  failure?: FileTransferError;
}

const FILE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const receivers = new WeakMap<ActionChannel, FileReceiver>();

/**
 * The receiving end of file transfers on one channel: serves `__file_chunk`, holds each file in memory until it
 * is taken, and refuses what does not fit — a file over the size bound, a chunk out of order, a chunk that is not
 * what it says. A refused transfer is dropped at once and its key remembers why, so taking it later says so.
 */
export class FileReceiver {
  private readonly transfers = new Map<string, Transfer>();
  private readonly maxFileBytes: number;
  private readonly maxTransfers: number;

  constructor(channel: ActionChannel, options: FileReceiverOptions = {}) {
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.maxTransfers = options.maxTransfers ?? 16;
    channel.handle(FILE_CHUNK_ACTION, async (data) => this.receive(data));
    void channel.whenClosed().then(() => this.transfers.clear());
  }

  /** The bytes of a complete file, handed over once; a torn, refused or unknown transfer is a typed error. */
  take(fileKey: string): Uint8Array {
    const transfer = this.transfers.get(fileKey);
    this.transfers.delete(fileKey);
    if (!transfer)
      throw new FileTransferError(FILE_TRANSFER_ERROR_CODES.UNKNOWN, `no file transfer ${fileKey}`, fileKey);
    if (transfer.failure) throw transfer.failure;
    if (transfer.next < transfer.amount) {
      throw new FileTransferError(
        FILE_TRANSFER_ERROR_CODES.TORN,
        `file ${fileKey} is torn: ${transfer.next} of ${transfer.amount} chunks arrived`,
        fileKey,
      );
    }
    return Buffer.concat(transfer.chunks);
  }

  /** Transfers held: in progress, complete, or failed and not yet taken. */
  get held(): number {
    return this.transfers.size;
  }

  private receive(data: Record<string, unknown>): Record<string, unknown> {
    const fileKey = data.file_key;
    if (typeof fileKey !== "string" || !FILE_KEY.test(fileKey))
      throw wireError(FILE_TRANSFER_ERROR_CODES.BAD_CHUNK, "file_key is not a valid transfer key");
    const { file_length: length, chunk_index: index, chunk_amount: amount, chunk_size: size } = data;
    const chunk = data.chunk_base64;
    const integer = (value: unknown, min: number) => Number.isSafeInteger(value) && (value as number) >= min;
    let transfer = this.transfers.get(fileKey);
    const fail = (code: string, message: string): never => {
      const failure = new FileTransferError(code, `file ${fileKey}: ${message}`, fileKey);
      // Kept (as a failure, with no bytes) so the side that waits for the file learns why it will not come.
      if (transfer || this.transfers.size < this.maxTransfers)
        this.transfers.set(fileKey, { length: 0, amount: 0, next: 0, received: 0, chunks: [], failure });
      throw wireError(code, failure.message);
    };
    if (
      !integer(length, 0) ||
      !integer(amount, 1) ||
      !integer(index, 0) ||
      (index as number) >= (amount as number)
    )
      return fail(
        FILE_TRANSFER_ERROR_CODES.BAD_CHUNK,
        "file_length, chunk_index and chunk_amount do not fit",
      );
    if ((length as number) > this.maxFileBytes)
      return fail(
        FILE_TRANSFER_ERROR_CODES.TOO_LARGE,
        `${length} bytes is over the ${this.maxFileBytes}-byte bound`,
      );
    if ((amount as number) !== Math.max(1, Math.ceil((length as number) / FILE_CHUNK_BYTES)))
      return fail(FILE_TRANSFER_ERROR_CODES.BAD_CHUNK, `${length} bytes cannot be ${amount} chunks`);
    if (
      typeof chunk !== "string" ||
      chunk.length > Math.ceil(FILE_CHUNK_BYTES / 3) * 4 ||
      chunk.length % 4 !== 0 ||
      !BASE64.test(chunk)
    )
      return fail(FILE_TRANSFER_ERROR_CODES.BAD_CHUNK, "chunk_base64 is not one chunk of base64");
    const bytes = Buffer.from(chunk, "base64");
    if (size !== undefined && size !== bytes.length)
      return fail(
        FILE_TRANSFER_ERROR_CODES.BAD_CHUNK,
        `chunk_size ${size} is not the chunk's ${bytes.length} bytes`,
      );
    if (index === 0) {
      // A first chunk starts the transfer afresh, as a resend after a broken attempt does.
      if (!transfer && this.transfers.size >= this.maxTransfers)
        throw wireError(
          FILE_TRANSFER_ERROR_CODES.BUSY,
          `more than ${this.maxTransfers} file transfers at once`,
        );
      transfer = { length: length as number, amount: amount as number, next: 0, received: 0, chunks: [] };
      this.transfers.set(fileKey, transfer);
    }
    if (!transfer || transfer.failure || transfer.next !== index)
      return fail(
        FILE_TRANSFER_ERROR_CODES.OUT_OF_ORDER,
        `chunk ${index} arrived, ${transfer && !transfer.failure ? `chunk ${transfer.next}` : "chunk 0"} was due`,
      );
    if (transfer.length !== length || transfer.amount !== amount)
      return fail(FILE_TRANSFER_ERROR_CODES.BAD_CHUNK, "file_length or chunk_amount changed mid-transfer");
    const last = index === transfer.amount - 1;
    const expected = last ? transfer.length - transfer.received : FILE_CHUNK_BYTES;
    if (bytes.length !== expected)
      return fail(
        FILE_TRANSFER_ERROR_CODES.BAD_CHUNK,
        `chunk ${index} holds ${bytes.length} bytes, not ${expected}`,
      );
    transfer.chunks.push(bytes);
    transfer.received += bytes.length;
    transfer.next++;
    return {};
  }
}

/** The channel's file receiver, made (and `__file_chunk` served) on first use. */
export function receiveFiles(channel: ActionChannel, options?: FileReceiverOptions): FileReceiver {
  let receiver = receivers.get(channel);
  if (!receiver) {
    receiver = new FileReceiver(channel, options);
    receivers.set(channel, receiver);
  }
  return receiver;
}

/**
 * Sends a file to the other end in `__file_chunk` pieces of 16 KiB, one after another, and resolves to its key
 * (`<sha256 prefix>-<uuid>[.ext]`) for a later call to name. A refusal on the way is a {@link FileTransferError}
 * with the receiver's code.
 */
export async function sendFile(
  channel: ActionChannel,
  bytes: Uint8Array,
  options: { extension?: string; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<string> {
  const extension = (options.extension ?? "").replace(/^\.+/, "");
  if (extension && !/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/.test(extension))
    throw new FileTransferError(FILE_TRANSFER_ERROR_CODES.BAD_CHUNK, `invalid file extension ${extension}`);
  const digest = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  const fileKey = `${digest}-${randomUUID().replaceAll("-", "")}${extension ? `.${extension}` : ""}`;
  const amount = Math.max(1, Math.ceil(bytes.length / FILE_CHUNK_BYTES));
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let index = 0; index < amount; index++) {
    const piece = data.subarray(index * FILE_CHUNK_BYTES, (index + 1) * FILE_CHUNK_BYTES);
    try {
      await channel.call(
        FILE_CHUNK_ACTION,
        {
          file_key: fileKey,
          file_length: bytes.length,
          chunk_base64: piece.toString("base64"),
          chunk_index: index,
          chunk_amount: amount,
          chunk_size: piece.length,
        },
        {
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          ...(options.signal ? { signal: options.signal } : {}),
        },
      );
    } catch (error) {
      if (!(error instanceof ActionCallError)) throw error;
      const code = error.apiError?.details.code;
      throw new FileTransferError(
        typeof code === "string" ? code : FILE_TRANSFER_ERROR_CODES.TORN,
        `sending file ${fileKey} failed at chunk ${index}: ${error.apiError?.message ?? error.message}`,
        fileKey,
      );
    }
  }
  return fileKey;
}

/** The error a refused chunk is answered with: the protocol's code, and the transfer's own in `details.code`. */
function wireError(code: string, message: string): AgentApiError {
  const apiCode =
    code === FILE_TRANSFER_ERROR_CODES.TOO_LARGE
      ? AGENT_API_ERROR_CODES.PAYLOAD_TOO_LARGE
      : code === FILE_TRANSFER_ERROR_CODES.BUSY
        ? AGENT_API_ERROR_CODES.RATE_LIMITED
        : AGENT_API_ERROR_CODES.INVALID_ARGUMENT;
  return new AgentApiError(apiCode, message, { details: { code } });
}
