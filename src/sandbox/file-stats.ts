/**
 * What the sandbox reads of an `lstat` or `fstat`; node:fs's `Stats` is one. The sandbox's exported types name
 * this rather than `Stats`, so Keel's declarations type-check in a project that has no Node type definitions.
 */
export interface FileStats {
  readonly dev: number;
  readonly ino: number;
  readonly birthtimeMs: number;
  readonly size: number;
  readonly nlink: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}
