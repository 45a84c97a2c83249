/**
 * The hand-written minimal loop every figure is compared with: call the model's stream, collect text and tool
 * calls, call the tools, push the messages, until a turn without tool calls. No events, no state machine, no
 * store: the floor of what an agent loop costs with this model and tool in this process.
 */

/**
 * Run to the final text; `tools` maps a name to `{ execute, inputSchema }`. `onStep(messages)`, when given, is
 * called after every step (S4's hand-written checkpoint).
 */
export async function runBaselineLoop({ model, tools, inputText, maxSteps = 64, onStep }) {
  const toolSpecs = specsOf(tools);
  const messages = [{ role: "user", content: inputText }];
  for (let step = 0; step < maxSteps; step++) {
    let text = "";
    const toolCalls = [];
    for await (const part of model.stream({ messages, tools: toolSpecs, options: {} })) {
      if (part.type === "text-delta") text += part.text;
      else if (part.type === "tool-call")
        toolCalls.push({ id: part.id, name: part.name, arguments: part.arguments });
      else if (part.type === "error") throw part.error;
    }
    if (toolCalls.length === 0) {
      messages.push({ role: "assistant", content: text });
      if (onStep !== undefined) onStep(messages);
      return { text, steps: step + 1, messages };
    }
    messages.push({ role: "assistant", content: text, toolCalls });
    for (const call of toolCalls) {
      const result = await tools[call.name].execute(call.arguments);
      messages.push({
        role: "tool",
        toolCallId: call.id,
        toolName: call.name,
        content: typeof result === "string" ? result : JSON.stringify(result),
      });
    }
    if (onStep !== undefined) onStep(messages);
  }
  throw new Error("max steps");
}

/** The same loop as an async generator of stream chunks: one per text delta, then `run.finished`. */
export async function* streamBaselineLoop({ model, tools, inputText, maxSteps = 64 }) {
  const toolSpecs = specsOf(tools);
  const messages = [{ role: "user", content: inputText }];
  let sequence = 0;
  for (let step = 0; step < maxSteps; step++) {
    let text = "";
    const toolCalls = [];
    for await (const part of model.stream({ messages, tools: toolSpecs, options: {} })) {
      if (part.type === "text-delta") {
        text += part.text;
        yield { kind: "llm.delta", sequence: ++sequence, payload: { text: part.text } };
      } else if (part.type === "tool-call")
        toolCalls.push({ id: part.id, name: part.name, arguments: part.arguments });
      else if (part.type === "error") throw part.error;
    }
    if (toolCalls.length === 0) {
      messages.push({ role: "assistant", content: text });
      yield { kind: "run.finished", sequence: ++sequence, payload: { text, steps: step + 1 } };
      return;
    }
    messages.push({ role: "assistant", content: text, toolCalls });
    for (const call of toolCalls) {
      const result = await tools[call.name].execute(call.arguments);
      messages.push({
        role: "tool",
        toolCallId: call.id,
        toolName: call.name,
        content: JSON.stringify(result),
      });
    }
  }
  throw new Error("max steps");
}

/** Throws unless a hand-written run took the steps it should have. */
export function baselineStepsCheck(result, steps) {
  if (result.steps !== steps)
    throw new Error(`bench sanity check failed: hand-written run took ${result.steps} steps, not ${steps}`);
}

const specCache = new WeakMap();

function specsOf(tools) {
  let specs = specCache.get(tools);
  if (specs === undefined) {
    specs = Object.entries(tools).map(([name, tool]) => ({
      name,
      description: name,
      inputSchema: tool.inputSchema,
    }));
    specCache.set(tools, specs);
  }
  return specs;
}
