import type { ContextAssembler, ContextAssemblyInput, ContextAssemblyResult } from "./context-assembler.js";

/** Starts every run with the session's whole stored transcript and all of its artifacts. */
export class PassthroughContextAssembler implements ContextAssembler {
  async assemble(input: ContextAssemblyInput): Promise<ContextAssemblyResult> {
    const [transcript, sessionArtifacts] = await Promise.all([
      input.sessionManager.loadMessages(input.sessionId),
      input.sessionManager.listArtifacts(input.sessionId),
    ]);
    return {
      transcript,
      sessionArtifacts,
      metadata: {
        assembler: "passthrough",
        strategy: "passthrough",
        omittedMessages: 0,
        omittedArtifacts: 0,
      },
    };
  }
}
