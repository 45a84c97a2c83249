import { mcpToolPlugin } from "../mcp/mcp-tool-plugin.js";
import { registerBuiltin } from "../plugins/plugin-registry.js";
import { registerJsonlStore } from "../stores/jsonl/register-jsonl-store.js";
import { registerPostgresStore } from "../stores/postgres/register-postgres-store.js";
import { registerSqliteStore } from "../stores/sqlite/register-sqlite-store.js";
import { agentToolPlugin } from "../tools/agent-as-tool.js";
import { filesystemToolPlugins, filesystemToolsetPlugin } from "../toolsets/filesystem/filesystem-toolset.js";
import { hostKnowledgeToolPlugin } from "../toolsets/host/host-knowledge-tool.js";
import { hostToolPlugin } from "../toolsets/host/host-tool.js";
import { memoryToolsetPlugin, memoryToolsToolsetPlugin } from "../toolsets/memory/memory-toolset.js";
import { httpRequestToolPlugin } from "../toolsets/network/http-request-tool.js";
import { executeCommandToolPlugin } from "../toolsets/shell/execute-command-tool.js";
import { setEnvToolPlugin } from "../toolsets/shell/set-env-tool.js";
import { shellExecToolPlugin } from "../toolsets/shell/shell-exec-tool.js";
import { skillsToolPlugins, skillsToolsetPlugin } from "../toolsets/skills/skills-toolset.js";
import { registerContextAssemblerBuiltins } from "./builtin-context-assemblers.js";
import { registerEventBusBuiltins } from "./builtin-event-buses.js";
import { registerMemoryBuiltins } from "./builtin-memories.js";
import { registerPatternBuiltins } from "./builtin-patterns.js";
import { registerRunQueueBuiltins } from "./builtin-run-queues.js";
import { registerRuntimeBuiltins } from "./builtin-runtimes.js";
import { registerSessionBuiltins } from "./builtin-session-managers.js";
import { registerSkillsBuiltins } from "./builtin-skills-managers.js";
import { registerToolExecutorBuiltins } from "./builtin-tool-executors.js";

let done = false;

/** Register every builtin plugin once; the Runtime calls this before it loads a config. */
export function registerBuiltins(): void {
  if (done) return;
  done = true;
  registerEventBusBuiltins();
  registerSessionBuiltins();
  registerJsonlStore();
  // Its module imports `pg` only when a postgres store is built, so registering it costs nothing without pg.
  registerPostgresStore();
  registerSqliteStore();
  registerSkillsBuiltins();
  registerMemoryBuiltins();
  registerContextAssemblerBuiltins();
  registerPatternBuiltins();
  registerToolExecutorBuiltins();
  registerRuntimeBuiltins();
  // Its module imports bullmq and ioredis only when a bullmq queue is built.
  registerRunQueueBuiltins();
  registerBuiltin(agentToolPlugin);
  registerBuiltin(filesystemToolsetPlugin);
  for (const plugin of filesystemToolPlugins) registerBuiltin(plugin);
  // Its module imports @modelcontextprotocol/sdk only when an mcp tool is built.
  registerBuiltin(mcpToolPlugin);
  registerBuiltin(httpRequestToolPlugin);
  registerBuiltin(hostToolPlugin);
  registerBuiltin(hostKnowledgeToolPlugin);
  registerBuiltin(shellExecToolPlugin);
  registerBuiltin(executeCommandToolPlugin);
  registerBuiltin(setEnvToolPlugin);
  registerBuiltin(skillsToolsetPlugin);
  for (const plugin of skillsToolPlugins) registerBuiltin(plugin);
  registerBuiltin(memoryToolsetPlugin);
  registerBuiltin(memoryToolsToolsetPlugin);
}
