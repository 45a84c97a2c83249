/**
 * A code-first agent: a tool from `defineTool`, a scripted model from `keel/testing`, a typed result.
 * Run it with `npx tsx examples/code-first/main.ts` after `npm run build`, or through the test suite.
 */
import { z } from "zod";
import { defineTool, Runtime } from "../../src/index.js";
import { scriptedModel } from "../../src/testing/index.js";

export const add = defineTool({
  name: "add",
  description: "Add two numbers",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

const Answer = z.object({ sum: z.number() });

/** Runs the agent once and returns its typed answer and the run's stop reason. */
export async function main(): Promise<{ answer: z.infer<typeof Answer> | null; stopReason: string }> {
  const runtime = await Runtime.fromDict({
    agents: [
      {
        id: "math",
        name: "Math",
        instructions: 'Use the add tool, then answer with JSON {"sum": number}.',
        tools: [add],
        llm: scriptedModel([
          { toolCalls: [{ name: "add", arguments: { a: 2, b: 40 } }] },
          { deltas: ['{"sum": ', "42}"] },
        ]),
      },
    ],
  });
  try {
    const result = await runtime.runDetailed({
      agentId: "math",
      inputText: "What is 2 + 40?",
      outputType: Answer,
    });
    return { answer: result.finalOutput, stopReason: result.stopReason };
  } finally {
    await runtime.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await main());
}
