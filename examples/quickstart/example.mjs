// `npm run example`: the quickstart agent on a real model when a key is set, else offline on the scripted mock.
// ANTHROPIC_API_KEY picks agent.anthropic.json (Claude), else OPENAI_API_KEY picks agent.openai.json (OpenAI or
// any server at OPENAI_BASE_URL), else agent.json runs with no key and no network. KEEL_EXAMPLE_PROVIDER
// (mock, anthropic or openai) chooses explicitly.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const CONFIGS = {
  anthropic: { file: "agent.anthropic.json", note: "Claude (ANTHROPIC_API_KEY is set)" },
  openai: { file: "agent.openai.json", note: "OpenAI (OPENAI_API_KEY is set)" },
  mock: {
    file: "agent.json",
    note: "the offline scripted model (set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real one)",
  },
};

function choose(env) {
  const explicit = env.KEEL_EXAMPLE_PROVIDER;
  if (explicit) {
    if (!(explicit in CONFIGS)) {
      console.error(
        `KEEL_EXAMPLE_PROVIDER must be one of ${Object.keys(CONFIGS).join(", ")}, not "${explicit}"`,
      );
      process.exit(2);
    }
    return explicit;
  }
  if (env.ANTHROPIC_API_KEY?.trim()) return "anthropic";
  if (env.OPENAI_API_KEY?.trim()) return "openai";
  return "mock";
}

const { file, note } = CONFIGS[choose(process.env)];
console.error(`Running the quickstart on ${note}.`);
const cli = join(here, "../../dist/cli/main.js");
const result = spawnSync(process.execPath, [cli, "run", join(here, file), ...process.argv.slice(2)], {
  stdio: "inherit",
});
process.exitCode = result.status ?? 1;
