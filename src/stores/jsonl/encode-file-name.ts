import { KeelError } from "../../errors/keel-error.js";

// Most file systems refuse names longer than 255 bytes; leave room for the extension.
const MAX_ENCODED_LENGTH = 240;
const SAFE = /^[a-z0-9_-]$/;

/**
 * A file-name-safe form of any id: `a-z`, `0-9`, `_` and `-` stay, every other UTF-8 byte becomes `%XX`. Upper
 * case is escaped too, so two ids differing only in case stay two files on case-insensitive file systems, and
 * `.` is escaped so no id can become `.`, `..` or a hidden file.
 */
export function encodeFileName(id: string): string {
  let encoded = "";
  for (const char of id) {
    if (SAFE.test(char)) {
      encoded += char;
      continue;
    }
    for (const byte of Buffer.from(char, "utf8")) {
      encoded += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    }
  }
  if (encoded.length > MAX_ENCODED_LENGTH) {
    throw new KeelError(`the id "${id.slice(0, 40)}…" is too long to name a file`, {
      code: "store.invalid_id",
      hint: `The jsonl_file store names files after ids; keep ids under about ${MAX_ENCODED_LENGTH / 3} non-ASCII or ${MAX_ENCODED_LENGTH} lower-case ASCII characters.`,
    });
  }
  return encoded;
}

/** The id a name made by {@link encodeFileName} stands for, or undefined for a name it cannot have made. */
export function decodeFileName(name: string): string | undefined {
  try {
    const id = decodeURIComponent(name);
    // Round-tripping rejects names this store did not write (a stray `notes.txt.jsonl`, a hand-made file).
    return encodeFileName(id) === name ? id : undefined;
  } catch {
    return undefined;
  }
}
