import { type FSWatcher, watch } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { KeelError } from "../../errors/keel-error.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { OutputStream } from "./validate.js";

export interface ConfigWatcher {
  close(): Promise<void>;
}

/** Editors write a file in bursts (truncate, write, rename): one reload for a burst, once it has settled. */
const SETTLE_MS = 100;

/**
 * Reload the runtime whenever its config file changes (`keel dev`). The folder is watched rather than the
 * file: an editor that saves by writing a new file and renaming it over the old one would end a watch on the
 * file itself. Reloads never overlap; a config that does not load is reported and the last good one stays.
 */
export function watchConfig(
  runtime: Runtime,
  configPath: string,
  io: { stdout: OutputStream; stderr: OutputStream },
): ConfigWatcher {
  const path = resolve(configPath);
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  let reloading: Promise<void> = Promise.resolve();
  let closed = false;
  const reload = async () => {
    try {
      const { changedAgents } = await runtime.reload();
      io.stdout.write(
        `Reloaded ${name}: ${
          changedAgents.length === 0 ? "no agent changed" : `changed ${changedAgents.join(", ")}`
        }; serving ${runtime.listAgents().length} agent(s)\n`,
      );
    } catch (thrown) {
      const hint = KeelError.isInstance(thrown) && thrown.hint ? `\n  ${thrown.hint}` : "";
      io.stderr.write(
        `${name} was not reloaded, the agents it last loaded still serve: ${(thrown as Error)?.message}${hint}\n`,
      );
    }
  };
  const watcher: FSWatcher = watch(dirname(path), (_event, changed) => {
    if (closed || (changed !== null && changed !== name)) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      reloading = reloading.then(reload);
    }, SETTLE_MS);
  });
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      watcher.close();
      await reloading;
    },
  };
}
