import { createHash, randomUUID } from "node:crypto";
import { getLogger } from "../../logging/logger.js";
import { DEFAULT_MAX_FILE_BYTES, FileTransferError } from "../transport/file-transfer.js";
import type { RunResultBody } from "../wire/run-result.js";

/**
 * The largest artifact sent inline, as base64 in `artifact.created`: 512 KiB, the bound above which
 * `storage.set` sends a value as a file too. Its base64 (683 KiB) leaves room in a 1 MiB result, and the host's
 * own inline bound (1 MiB of content) is never reached.
 */
export const INLINE_ARTIFACT_BYTES = 512 * 1024;

/** Sends bytes to the host as a file and resolves to the key that names it. */
export type ArtifactFileSender = (bytes: Uint8Array, options: { extension: string }) => Promise<string>;

/**
 * A Keel artifact as an `artifact.created` result: its payload (a string as text, anything else as JSON) inline
 * up to {@link INLINE_ARTIFACT_BYTES}; above that sent first as a file and named by `file_key`, up to the 10 MiB a
 * host receiver holds. Larger, or when the transfer is refused, the result carries the metadata alone (size and
 * digest) and says why in `metadata.content_omitted` — never part of the content.
 */
export async function artifactResult(
  artifact: { name: string; kind: string; payload: unknown },
  send: ArtifactFileSender | undefined,
): Promise<RunResultBody> {
  const text = typeof artifact.payload === "string";
  const bytes = Buffer.from(text ? (artifact.payload as string) : JSON.stringify(artifact.payload ?? null));
  const data = {
    artifact_id: randomUUID(),
    artifact_type: artifact.kind,
    name: artifact.name,
    mime_type: text ? "text/plain" : "application/json",
    size_bytes: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
  if (bytes.length <= INLINE_ARTIFACT_BYTES)
    return { type: "artifact.created", data: { ...data, content_base64: bytes.toString("base64") } };
  let omitted = "too_large";
  if (send && bytes.length <= DEFAULT_MAX_FILE_BYTES) {
    try {
      const fileKey = await send(bytes, { extension: text ? "txt" : "json" });
      return { type: "artifact.created", data: { ...data, file_key: fileKey } };
    } catch (error) {
      if (!(error instanceof FileTransferError)) throw error;
      getLogger().warn(`artifact ${artifact.name} could not be sent to the host: ${error.message}`);
      omitted = error.code;
    }
  }
  return { type: "artifact.created", data: { ...data, metadata: { content_omitted: omitted } } };
}
