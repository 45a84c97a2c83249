/** A ```ts block of a markdown file, as a program of its own. */
export interface Snippet {
  /** `readme-<n>.ts`, numbered from 1 in the order the blocks appear. */
  name: string;
  /** The line the block's code starts on (1-based), to point at it when it fails. */
  line: number;
  code: string;
  /** The packages it imports, as written (`keel`, `keel/testing`, `zod`, `@ai-sdk/anthropic`, …). */
  imports: string[];
  /**
   * What it prints: a line `console.log(…); // text` promises `text` as a line of its output, so the comment a
   * reader sees is what the test checks.
   */
  expectedOutput: string[];
}

const BLOCK = /^```ts\n([\s\S]*?)^```$/gm;
const IMPORT = /^import\s[^;]*?from\s+"([^"]+)";/gm;
const PRINTED = /^console\.log\(.*\);\s*\/\/\s*(.+)$/gm;

/** The TypeScript blocks of a markdown text. */
export function tsSnippets(markdown: string): Snippet[] {
  return [...markdown.matchAll(BLOCK)].map((match, index) => {
    const code = match[1]!;
    return {
      name: `readme-${index + 1}.ts`,
      line: markdown.slice(0, match.index).split("\n").length + 1,
      code,
      imports: [...code.matchAll(IMPORT)].map((found) => found[1]!),
      expectedOutput: [...code.matchAll(PRINTED)].map((found) => found[1]!.trim()),
    };
  });
}

/** The relative link targets of a markdown text (`[text](path)`), anchors and absolute URLs left out. */
export function relativeLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!.split("#")[0]!)
    .filter((target) => target !== "" && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}
