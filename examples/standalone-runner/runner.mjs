// A runner for the host-runner protocol (LangBot's AgentRunner protocol v1) in plain Node: no Keel, no
// dependencies. It is what a third-party runner author writes. The host spawns it and talks over its stdio, one
// JSON message per line; messages over 16 KiB arrive as chunk_start / chunk_data / chunk_end lines.
//
// One runner, plugin:example/shouter/default: it asks the host's model (through the host, which checks the call
// against the run's grant) to answer the user, streams the answer back in capitals, and counts the turns of the
// conversation in host-owned state.
import { createInterface } from "node:readline";

const MANIFEST = {
  id: "plugin:example/shouter/default",
  name: "default",
  label: { en_US: "Shouter" },
  protocol_version: "1",
  capabilities: { streaming: true },
  permissions: { models: ["invoke"] },
};

let nextSeqId = 1;
const waiting = new Map(); // seq_id of our calls to the host -> resolve
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const reply = (seqId, data, chunkStatus = "end") =>
  send({ seq_id: seqId, code: 0, message: "success", data, chunk_status: chunkStatus });

/** A call to the host; every call a runner makes carries its run_id. */
function callHost(action, data) {
  const seqId = nextSeqId++;
  send({ seq_id: seqId, action, data });
  return new Promise((resolve, reject) => waiting.set(seqId, { resolve, reject }));
}

async function* run(context) {
  const runId = context.run_id;
  let sequence = 0;
  const result = (type, data) => ({
    run_id: runId,
    type,
    data,
    sequence: ++sequence,
    timestamp: Math.floor(Date.now() / 1000),
  });
  const model = context.resources.models[0]?.model_id;
  if (!model) {
    yield result("run.failed", {
      code: "runner.no_model",
      error: "the host granted no model",
      retryable: false,
    });
    return;
  }
  const question = context.input.text ?? "";
  const answer = await callHost("invoke_llm", {
    run_id: runId,
    llm_model_uuid: model,
    messages: [{ role: "user", content: question }],
    funcs: [],
    extra_args: {},
  });
  const text = String(answer.message?.content ?? "").toUpperCase();
  for (const word of text.split(/(?<= )/))
    yield result("message.delta", { chunk: { role: "assistant", content: word } });
  const turns = Number(context.state.conversation?.["shouter.turns"] ?? 0) + 1;
  yield result("state.updated", { scope: "conversation", key: "shouter.turns", value: turns });
  yield result("message.completed", { message: { role: "assistant", content: text } });
  yield result("run.completed", { finish_reason: "stop" });
}

async function serve(request) {
  const { seq_id: seqId, action, data } = request;
  try {
    if (action === "__ping") return reply(seqId, {});
    if (action === "list_agent_runners") {
      return reply(seqId, {
        runners: [
          { plugin_author: "example", plugin_name: "shouter", runner_name: "default", manifest: MANIFEST },
        ],
      });
    }
    if (action === "run_agent") {
      for await (const item of run(data.context)) reply(seqId, item, "continue");
      return reply(seqId, {}, "end");
    }
    send({ seq_id: seqId, code: 1, message: `unknown action ${action}`, data: {}, chunk_status: "end" });
  } catch (error) {
    send({ seq_id: seqId, code: 1, message: String(error), data: {}, chunk_status: "end" });
  }
}

function onMessage(message) {
  if ("action" in message) return void serve(message);
  const call = waiting.get(message.seq_id);
  if (!call) return;
  waiting.delete(message.seq_id);
  if (message.code === 0) call.resolve(message.data);
  else call.reject(new Error(message.message));
}

let chunked; // the pieces of a message arriving in chunk lines
createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.startsWith("{")) return;
  const message = JSON.parse(line);
  if (message.type === "chunk_start") chunked = [];
  else if (message.type === "chunk_data") chunked?.push(message.data);
  else if (message.type === "chunk_end") {
    onMessage(JSON.parse(chunked.join("")));
    chunked = undefined;
  } else onMessage(message);
});
