import type { FileHandle } from "node:fs/promises";

/** Read up to `length` bytes at `position`, looping over short reads. */
export async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(Math.max(0, length));
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === buffer.length ? buffer : buffer.subarray(0, filled);
}

/** The end of the last whole UTF-8 character in `buffer`, so a cut read never splits one. */
export function utf8Boundary(buffer: Buffer): number {
  let index = buffer.length - 1;
  let continuation = 0;
  while (index >= 0 && continuation < 3 && (buffer[index]! & 0xc0) === 0x80) {
    index--;
    continuation++;
  }
  if (index < 0) return buffer.length;
  const lead = buffer[index]!;
  const width = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return continuation + 1 >= width ? buffer.length : index;
}
