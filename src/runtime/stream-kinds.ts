import { nearMatch } from "../config/near-match.js";
import { ConfigError } from "../errors/error-classes.js";
import { EVENT_SCHEMAS } from "../events/event-schemas.js";
import { chunkKindOf, RunStreamChunkKind } from "./stream-chunk.js";

/** Every kind a stream chunk can have: each declared event's name, `tool.completed` and `tool.failed` as `tool.finished`. */
function streamKinds(): string[] {
  const kinds = new Set<string>(Object.values(RunStreamChunkKind));
  for (const name of Object.keys(EVENT_SCHEMAS)) kinds.add(chunkKindOf(name));
  return [...kinds];
}

let known: ReadonlySet<string> | undefined;

/**
 * Refuse a `kinds` filter naming a kind no chunk has — a misspelling would otherwise filter out everything,
 * silently — with the closest known kind and the list of them in the hint.
 */
export function checkStreamKinds(kinds: readonly string[] | undefined): void {
  if (kinds === undefined) return;
  known ??= new Set(streamKinds());
  const all = known;
  if (!Array.isArray(kinds))
    throw new ConfigError("The stream's kinds must be an array of chunk kinds", {
      hint: `Pass kinds: ["llm.delta", "tool.finished"], or leave it out for every chunk; kinds: ${[...all].join(", ")}`,
    });
  for (const kind of kinds) {
    if (all.has(kind)) continue;
    const near = typeof kind === "string" ? nearMatch(kind, all) : undefined;
    const renamed = kind === "tool.completed" || kind === "tool.failed";
    throw new ConfigError(`Unknown stream chunk kind '${String(kind)}'`, {
      hint: `${
        renamed
          ? `The stream shows ${kind} as tool.finished (payload.ok says which). `
          : near === undefined
            ? ""
            : `Did you mean '${near}'? `
      }Chunk kinds: ${[...all].join(", ")}`,
      context: { kind, knownKinds: [...all] },
    });
  }
}

/**
 * The chunk kinds a stream with this filter yields, or null for all of them. `run.finished` is always among them:
 * every stream ends with it, whatever it filters.
 */
export function wantedKinds(kinds: readonly string[] | undefined): ReadonlySet<string> | null {
  if (kinds === undefined) return null;
  return new Set([...kinds, RunStreamChunkKind.RUN_FINISHED]);
}
