import { RUNNER_ACTIONS } from "../runner/keel-runner.js";
import type { ActionChannel } from "../transport/action-channel.js";
import { ActionCallError } from "../transport/channel-errors.js";
import {
  type AgentRunnerManifest,
  AgentRunnerManifestSchema,
  formatRunnerId,
  isCompatibleProtocolVersion,
  type RunnerAddress,
} from "../wire/manifest.js";
import { describeIssues } from "../wire/run-result.js";

/** A runner the host found on one of its plugin runtimes. */
export interface RunnerDescriptor {
  id: string;
  address: RunnerAddress;
  manifest: AgentRunnerManifest;
  /** The connection to the plugin runtime that serves it. */
  channel: ActionChannel;
  /** The action that runs it: `run_agent`, or `run_runner` on a runtime that knows only the newest names. */
  runAction: string;
}

/** How long discovery waits for a runtime's answer. */
export const DISCOVERY_TIMEOUT_MS = 20_000;

/**
 * Asks one plugin runtime for its runners (`list_agent_runners`, or `list_runners` when the runtime knows only the
 * newest names) and reads each entry on its own: an entry with an incompatible
 * `protocol_version`, an invalid manifest or an id that does not match its address is left out with a warning,
 * never failing the rest. Reads the addressed form (`{plugin_author, plugin_name, runner_name, manifest}`),
 * a bare manifest, and the plugin component form (`kind: AgentRunner` with `metadata` and `spec`).
 */
export async function discoverRunners(
  channel: ActionChannel,
  warn: (message: string) => void,
): Promise<RunnerDescriptor[]> {
  const list = (action: string) =>
    channel.call(action, { include_plugins: null }, { timeoutMs: DISCOVERY_TIMEOUT_MS });
  let answer: Record<string, unknown>;
  let runAction: string = RUNNER_ACTIONS.RUN;
  try {
    answer = await list(RUNNER_ACTIONS.LIST);
  } catch (error) {
    // A runtime that knows only the newest text's names refuses the older one, in words of its own (Keel says
    // `not_found`); the newer name is tried, and when that is refused too the first refusal is what went wrong.
    if (!(error instanceof ActionCallError)) throw error;
    answer = await list(RUNNER_ACTIONS.LIST_RUNNERS).catch((second: unknown) => {
      throw second instanceof ActionCallError ? error : second;
    });
    runAction = RUNNER_ACTIONS.RUN_RUNNER;
  }
  const entries = Array.isArray(answer.runners) ? answer.runners : [];
  const found: RunnerDescriptor[] = [];
  entries.forEach((entry, index) => {
    const descriptor = readEntry(entry, channel, runAction);
    if (typeof descriptor === "string") warn(`runner entry ${index} left out: ${descriptor}`);
    else found.push(descriptor);
  });
  return found;
}

function readEntry(entry: unknown, channel: ActionChannel, runAction: string): RunnerDescriptor | string {
  if (typeof entry !== "object" || entry === null) return "not an object";
  const record = entry as Record<string, unknown>;
  let raw = (record.manifest ?? record) as Record<string, unknown>;
  if (raw.kind === "AgentRunner") raw = fromComponentManifest(raw, record);
  const version = raw.protocol_version ?? record.protocol_version;
  if (version !== undefined && (typeof version !== "string" || !isCompatibleProtocolVersion(version))) {
    return `protocol_version ${JSON.stringify(version)} is not compatible with 1`;
  }
  const parsed = AgentRunnerManifestSchema.safeParse(raw);
  if (!parsed.success) return `invalid manifest (${describeIssues(parsed.error)})`;
  const manifest = parsed.data;
  const [, author, plugin, runner] = /^plugin:([^/]+)\/([^/]+)\/([^/]+)$/.exec(manifest.id)!;
  const address: RunnerAddress = {
    pluginAuthor: typeof record.plugin_author === "string" ? record.plugin_author : author!,
    pluginName: typeof record.plugin_name === "string" ? record.plugin_name : plugin!,
    runnerName: typeof record.runner_name === "string" ? record.runner_name : runner!,
  };
  if (formatRunnerId(address) !== manifest.id)
    return `id ${manifest.id} does not match its address ${formatRunnerId(address)}`;
  return { id: manifest.id, address, manifest, channel, runAction };
}

/** The plugin component manifest (`apiVersion`, `kind`, `metadata`, `spec`) as a protocol manifest. */
function fromComponentManifest(
  component: Record<string, unknown>,
  entry: Record<string, unknown>,
): Record<string, unknown> {
  const metadata = (component.metadata ?? {}) as Record<string, unknown>;
  const spec = (component.spec ?? {}) as Record<string, unknown>;
  const name = String(metadata.name ?? entry.runner_name ?? "");
  return {
    id: `plugin:${String(entry.plugin_author)}/${String(entry.plugin_name)}/${name}`,
    name,
    label: metadata.label ?? { en_US: name },
    description: metadata.description ?? null,
    protocol_version: spec.protocol_version ?? entry.protocol_version ?? "1",
    capabilities: spec.capabilities ?? entry.capabilities ?? {},
    permissions: spec.permissions ?? entry.permissions ?? {},
    context: spec.context ?? {},
    config_schema: spec.config ?? entry.config ?? [],
  };
}
