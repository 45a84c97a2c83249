import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { PluginConfigError } from "../errors/error-classes.js";
import { type Logger, setLogger } from "../logging/logger.js";
import { parsePluginConfig } from "./plugin-config.js";

const schema = z.object({ db_path: z.string(), wal: z.boolean().default(true) });
const plugin = { kind: "session", type: "sqlite" };

let warnings: string[] = [];
let previous: Logger;
beforeEach(() => {
  warnings = [];
  previous = setLogger({ debug() {}, info() {}, warn: (message) => warnings.push(message), error() {} });
});
afterEach(() => {
  setLogger(previous);
});

function failure(config: unknown): PluginConfigError {
  try {
    parsePluginConfig(schema, config, plugin);
  } catch (error) {
    return error as PluginConfigError;
  }
  throw new Error("expected a PluginConfigError");
}

describe("parsePluginConfig", () => {
  it("refuses a near miss of a required key the config lacks, naming the key meant, without a warning", () => {
    const error = failure({ path: "keel.db" });
    expect(error).toBeInstanceOf(PluginConfigError);
    expect(error.message).toBe('session "sqlite": unknown config key "path"; did you mean "db_path"?');
    expect(error.hint).toBe('Rename "path" to "db_path" (known keys: db_path, wal)');
    expect(warnings).toEqual([]);
  });

  it("still warns about and drops an unknown key when the required ones are there", () => {
    expect(parsePluginConfig(schema, { db_path: "keel.db", path: "x" }, plugin)).toEqual({
      db_path: "keel.db",
      wal: true,
    });
    expect(warnings).toEqual([
      'session "sqlite": unknown config key "path" is ignored (known keys: db_path, wal)',
    ]);
  });

  it("says a required key is missing when no unknown key is near it", () => {
    const error = failure({ nothing_alike: 1 });
    expect(error.message).toBe(
      'session "sqlite": invalid config at db_path: Invalid input: expected string, received undefined',
    );
    expect(warnings).toEqual([
      'session "sqlite": unknown config key "nothing_alike" is ignored (known keys: db_path, wal)',
    ]);
  });
});
