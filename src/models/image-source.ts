import type { ImagePart } from "../contracts/message.js";

/** Where an image part's bytes are: a URL to fetch, or base64 data with its media type. */
export type ImageSource = { kind: "url"; url: string } | { kind: "base64"; mediaType: string; data: string };

/**
 * Read an image part: an `http(s):` URL, a `data:` URL, or bare base64 whose media type is the part's, else
 * guessed from the data's first bytes (PNG, JPEG, GIF, WebP), else PNG.
 */
export function imageSource(part: ImagePart): ImageSource {
  const data = part.data.trim();
  if (/^https?:\/\//i.test(data)) return { kind: "url", url: data };
  const dataUrl = /^data:([^;,]+)?(?:;[^,]*)?,(.*)$/s.exec(data);
  if (dataUrl) {
    const payload = dataUrl[2] ?? "";
    return { kind: "base64", mediaType: part.mediaType ?? dataUrl[1] ?? sniff(payload), data: payload };
  }
  return { kind: "base64", mediaType: part.mediaType ?? sniff(data), data };
}

function sniff(base64: string): string {
  if (base64.startsWith("iVBOR")) return "image/png";
  if (base64.startsWith("/9j/")) return "image/jpeg";
  if (base64.startsWith("R0lGOD")) return "image/gif";
  if (base64.startsWith("UklGR")) return "image/webp";
  return "image/png";
}
