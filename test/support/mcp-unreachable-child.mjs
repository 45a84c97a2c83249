// A child process for test/mcp-unreachable.test.ts: an agent whose `mcp` tool's server cannot be reached, run
// with runDetailed(), run() and stream() against Keel's build. Prints `@@result <json>` with what each gave, then
// closes the runtime and lets the process end by itself (a handle left open would hang it).
import { childSetup, report } from "./child-common.mjs";

const { spec, keel, scriptedModel } = await childSetup();
const model = scriptedModel([{ text: "never" }]);
const runtime = await keel.Runtime.fromDict({
  agents: [{ id: "a", name: "A", llm: model, tools: [{ id: "srv", type: "mcp", config: spec.config }] }],
});
const out = {};
try {
  const result = await runtime.runDetailed({ agentId: "a", sessionId: "s1", inputText: "go" });
  out.detailed = {
    stopReason: result.stopReason,
    error: result.error,
    code: result.errorDetails?.code,
    hint: result.errorDetails?.hint,
    permanent: result.exception instanceof keel.PermanentToolError,
  };
} catch (error) {
  out.detailed = { threw: error?.code ?? String(error) };
}
try {
  await runtime.run({ agentId: "a", sessionId: "s2", inputText: "go" });
  out.run = { resolved: true };
} catch (error) {
  out.run = { code: error?.code, hint: error?.hint, permanent: error instanceof keel.PermanentToolError };
}
try {
  const kinds = [];
  let last;
  for await (const chunk of runtime.stream({ agentId: "a", sessionId: "s3", inputText: "go" })) {
    kinds.push(chunk.kind);
    last = chunk;
  }
  out.stream = { kinds, stopReason: last?.result?.stopReason, code: last?.result?.errorDetails?.code };
} catch (error) {
  out.stream = { threw: error?.code ?? String(error) };
}
out.modelCalls = model.callCount;
await runtime.close();
report("result", out);
