import { KeelError } from "../../errors/keel-error.js";

/**
 * A typed Keel error in place of a file system one that says "not now": a full disk (or quota) is
 * `store.disk_full`, a device that failed the write `store.io`, both retryable — durable runs wait them out, and
 * the store cuts a failed append back so nothing half-written is left. Any other error comes back unchanged.
 */
export function toFileStoreError(error: unknown, path: string, operation: string): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const context = { operation, path, errno: code };
  if (code === "ENOSPC" || code === "EDQUOT") {
    return new KeelError(`jsonl store: ${operation} of ${path} failed, the disk is full`, {
      code: "store.disk_full",
      retryable: true,
      cause: error,
      hint: "Free space on the disk holding root_dir (or raise the quota); the failed write was cut back, so the file holds only whole records.",
      context,
    });
  }
  if (code === "EIO") {
    return new KeelError(`jsonl store: ${operation} of ${path} failed, the device failed the write`, {
      code: "store.io",
      retryable: true,
      cause: error,
      hint: "Check the disk or network file system holding root_dir; a torn last record is ignored when the file is read.",
      context,
    });
  }
  return error;
}
