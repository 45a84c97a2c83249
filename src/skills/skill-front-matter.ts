import { createRequire } from "node:module";
import type * as Yaml from "yaml";

// `yaml` is a large CommonJS package that only a SKILL.md with front matter needs: required on first use, it
// stays out of every start-up that reads no skill.
let yaml: typeof Yaml | undefined;

function parseYaml(text: string): unknown {
  yaml ??= createRequire(import.meta.url)("yaml") as typeof Yaml;
  return yaml.parse(text);
}

/** A `SKILL.md` split into its YAML front matter and its body. */
export interface SkillDocument {
  /** The parsed front matter; `null` when the file has none. */
  frontMatter: Record<string, unknown> | null;
  /** The Markdown after the front matter (the whole file when there is none). */
  body: string;
}

// The opening `---` must be the first line; the block may be empty.
const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;

/**
 * Split a `SKILL.md` into front matter and body. Throws when the front matter is not valid YAML or not a
 * mapping, so the caller can name the file in its warning.
 */
export function parseSkillDocument(text: string): SkillDocument {
  const match = FRONT_MATTER.exec(text);
  if (!match) return { frontMatter: null, body: text.replace(/^\uFEFF/, "") };
  const parsed: unknown = match[1] === undefined ? {} : (parseYaml(match[1]) ?? {});
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new Error("the front matter is not a mapping of keys to values");
  }
  return { frontMatter: parsed as Record<string, unknown>, body: text.slice(match[0].length) };
}

/** `allowed-tools` as a list: a YAML list, or one string separated by spaces and/or commas. */
export function parseAllowedTools(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map((item) => String(item).trim()).filter((item) => item.length > 0);
  return String(value)
    .split(/[\s,]+/)
    .filter((item) => item.length > 0);
}

/** The capabilities a skill may request in its front matter (`permissions`), as the policy names them. */
const REQUESTABLE = ["destructive", "shell", "network"] as const;
export type SkillCapabilityRequest = (typeof REQUESTABLE)[number];

/**
 * A skill's `permissions` front matter: the capabilities it requests. A list (`permissions: [network]`), one string (`permissions: network shell`) or a mapping
 * with `enable` (`permissions: {enable: [network]}`). A request never grants anything: the effective policy
 * admits it only when the agent's config enables the capability. Unknown names come back in `unknown`.
 */
export function parseSkillPermissions(value: unknown): {
  requests: SkillCapabilityRequest[];
  unknown: string[];
} {
  const raw =
    typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as { enable?: unknown }).enable
      : value;
  const requests: SkillCapabilityRequest[] = [];
  const unknown: string[] = [];
  for (const item of parseAllowedTools(raw)) {
    const name = item.toLowerCase();
    if ((REQUESTABLE as readonly string[]).includes(name)) {
      if (!requests.includes(name as SkillCapabilityRequest)) requests.push(name as SkillCapabilityRequest);
    } else unknown.push(item);
  }
  return { requests, unknown };
}
