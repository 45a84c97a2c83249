import { formatConfigError } from "../../config/config-issues.js";
import { loadConfig } from "../../config/load-config.js";

/** Where a command writes; `process.stdout` and test buffers both fit. */
export interface OutputStream {
  write(chunk: string): unknown;
}

/**
 * `keel validate <config>`: load and validate a config file without starting anything. Prints
 * `✓ <path>: N agent(s): id1, id2` and returns 0, or prints the error with every issue and its hint and returns 1.
 */
export async function validateCommand({
  configPath,
  stdout,
  stderr,
}: {
  configPath: string;
  stdout: OutputStream;
  stderr: OutputStream;
}): Promise<number> {
  try {
    const { config } = await loadConfig(configPath);
    const ids = config.agents.map((agent) => agent.id);
    stdout.write(`✓ ${configPath}: ${ids.length} agent(s): ${ids.join(", ")}\n`);
    return 0;
  } catch (error) {
    stderr.write(`${formatConfigError(error)}\n`);
    return 1;
  }
}
