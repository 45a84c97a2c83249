import { SandboxError, ToolError } from "../errors/error-classes.js";
import { ERROR_CODES } from "../errors/error-codes.js";
import { PathChangedError } from "./open-verified.js";

/** A filesystem error as a typed error whose message holds no host path. */
export function fsFailure(error: unknown, tool: string, given: string): Error {
  if (error instanceof SandboxError || error instanceof ToolError) return error;
  if (error instanceof PathChangedError) return pathChanged(tool, given);
  switch ((error as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return notFound(tool, given);
    case "ENOTDIR":
      return new ToolError(`${tool}: a component of '${given}' is a file, not a directory`, {
        code: ERROR_CODES.FS_NOT_DIRECTORY,
      });
    case "EISDIR":
      return isDirectory(tool, given);
    case "EACCES":
    case "EPERM":
      return new ToolError(`${tool}: the operating system denied access to '${given}'`, {
        code: ERROR_CODES.FS_ACCESS_DENIED,
      });
    case "ELOOP":
      return new SandboxError(`${tool}: '${given}' runs into a loop of symbolic links`, {
        code: ERROR_CODES.SANDBOX_INVALID_PATH,
      });
    case "ENXIO":
      return new SandboxError(`${tool}: '${given}' is a FIFO or socket, not a regular file`, {
        code: ERROR_CODES.SANDBOX_SPECIAL_FILE,
      });
    default:
      return new ToolError(
        `${tool}: '${given}' failed (${(error as NodeJS.ErrnoException).code ?? "unknown error"})`,
        { cause: error },
      );
  }
}

export function notFound(tool: string, given: string): ToolError {
  return new ToolError(`${tool}: '${given}' does not exist`, { code: ERROR_CODES.FS_NOT_FOUND });
}

export function isDirectory(tool: string, given: string): ToolError {
  return new ToolError(`${tool}: '${given}' is a directory`, { code: ERROR_CODES.FS_IS_DIRECTORY });
}

export function pathChanged(tool: string, given: string): SandboxError {
  return new SandboxError(
    `${tool}: '${given}' changed while it was being opened (a symbolic link or another file was put in its ` +
      "place); nothing was read or written.",
    { code: ERROR_CODES.SANDBOX_PATH_CHANGED, hint: "Something else is changing the workspace concurrently" },
  );
}
