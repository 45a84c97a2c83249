import { configValidationError, formatConfigError } from "../../config/config-issues.js";
import { loadConfig } from "../../config/load-config.js";
import { checkConfigReferences } from "./validate-references.js";

/** Where a command writes; `process.stdout` and test buffers both fit. */
export interface OutputStream {
  write(chunk: string): unknown;
}

/**
 * `keel validate <config>`: load and validate a config file, and resolve every plugin ref, `impl` module and
 * model (with its API key) the way `keel run` would, without starting anything. Prints
 * `✓ <path>: N agent(s): id1, id2` and returns 0, or prints the error with every issue and its hint and returns 1.
 */
export async function validateCommand({
  configPath,
  stdout,
  stderr,
  env,
}: {
  configPath: string;
  stdout: OutputStream;
  stderr: OutputStream;
  /** Where API keys are looked up; `process.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>;
}): Promise<number> {
  try {
    const { config, path, baseDir } = await loadConfig(configPath);
    // The schema passed; now what loading would refuse, every issue at once.
    const issues = await checkConfigReferences(config, env === undefined ? { baseDir } : { baseDir, env });
    if (issues.length > 0) throw configValidationError(issues, { configPath: path });
    const ids = config.agents.map((agent) => agent.id);
    stdout.write(`✓ ${configPath}: ${ids.length} agent(s): ${ids.join(", ")}\n`);
    return 0;
  } catch (error) {
    stderr.write(`${formatConfigError(error)}\n`);
    return 1;
  }
}
