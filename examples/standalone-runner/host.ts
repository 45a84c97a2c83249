// A Keel host attaching the standalone runner: it spawns runner.mjs, discovers its runner and runs it on one
// message, granting it one model. test/examples.test.ts runs it.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KeelHost } from "../../src/host/index.js";
import { scriptedModel } from "../../src/testing/index.js";

const here = dirname(fileURLToPath(import.meta.url));

export async function main(): Promise<{
  runners: string[];
  answer: string;
  results: string[];
  turns: unknown;
}> {
  const host = new KeelHost({
    models: { "model-1": scriptedModel([{ text: "ahoy, a keel is a ship's spine" }]) },
  });
  try {
    const runtime = await host.attachProcess(process.execPath, [join(here, "runner.mjs")]);
    const results: string[] = [];
    let answer = "";
    for await (const result of host.run(
      {
        event_id: "event-1",
        event_type: "message.received",
        conversation_id: "conversation-1",
        input: { text: "What is a keel?" },
        delivery: { surface: "api", supports_streaming: true },
      },
      {
        binding_id: "example",
        runner_id: "plugin:example/shouter/default",
        resource_policy: { allowed_model_uuids: ["model-1"] },
      },
    )) {
      results.push(result.type);
      if (result.type === "message.delta") answer += String(result.data.chunk.content ?? "");
    }
    const turns = await host.stores.state.get(
      "conversation:plugin:example/shouter/default:example:conversation-1",
      "shouter.turns",
    );
    return { runners: runtime.runners.map((runner) => runner.id), answer, results, turns };
  } finally {
    await host.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await main());
}
