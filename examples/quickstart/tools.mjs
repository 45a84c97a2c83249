// The quickstart's two tools. Each export is a Tool built with defineTool; agent.json refers to them as
// "./tools.mjs#add" and "./tools.mjs#wordCount", resolved relative to the config file.
import { defineTool } from "keel";
import { z } from "zod";

/** Adds two numbers; the zod schema is what the model sees and what Keel validates the arguments against. */
export const add = defineTool({
  name: "add",
  description: "Add two numbers and return their sum.",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

/** Counts the words of a text, so the model never has to guess. */
export const wordCount = defineTool({
  name: "word_count",
  description: "Count the words in a text.",
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }) => text.split(/\s+/).filter(Boolean).length,
});
