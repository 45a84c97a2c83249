import type { HostStores } from "../../src/host/index.js";

/**
 * Appends a user message per item to a conversation's event log and transcript, each in its thread (or none):
 * event ids `<idPrefix><index>`, `<conversation>-t<index>` by default.
 */
export async function appendThreaded(
  stores: HostStores,
  to: { conversation: string; idPrefix?: string },
  items: [thread: string | null, content: string][],
): Promise<void> {
  const { conversation, idPrefix = `${conversation}-t` } = to;
  for (const [index, [thread, content]] of items.entries()) {
    const event_id = `${idPrefix}${index}`;
    await stores.events.append({
      event_id,
      event_type: "message.received",
      source: "platform",
      conversation_id: conversation,
      thread_id: thread,
      metadata: {},
    });
    await stores.transcript.append({
      event_id,
      conversation_id: conversation,
      thread_id: thread,
      role: "user",
      item_type: "message",
      content,
      artifact_refs: [],
      metadata: {},
    });
  }
}
