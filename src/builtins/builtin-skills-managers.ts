import { parsePluginConfig } from "../plugins/plugin-config.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { LocalSkillsManager, localSkillsManagerConfigSchema } from "../skills/local-skills-manager.js";

/** Register the builtin skills manager `local`; calling it again is harmless. */
export function registerSkillsBuiltins(): void {
  registerBuiltin({
    kind: "skills",
    type: "local",
    get configSchema() {
      return localSkillsManagerConfigSchema();
    },
    create(config, context) {
      const parsed = parsePluginConfig(localSkillsManagerConfigSchema(), config, {
        kind: "skills",
        type: "local",
      });
      return new LocalSkillsManager({
        searchPaths: parsed.search_paths,
        enabled: parsed.enabled,
        baseDir: context.baseDir,
      });
    },
  });
}
