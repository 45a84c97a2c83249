// Past 400 lines: the usage text and the dispatch of every command sit together, so the two cannot drift.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { nearMatch } from "../config/near-match.js";
import type { RunStatus } from "../contracts/run-types.js";
import { type Logger, setLogger } from "../logging/logger.js";
import type { ToolDecision } from "../loop/decisions.js";
import { packageRoot } from "../util/package-root.js";
import type { Prompt } from "./commands/ask-decisions.js";
import type { OutputStream } from "./commands/validate.js";

/** Where the CLI reads and writes; `main.ts` passes the process's, tests pass buffers. */
export interface CliIO {
  stdout: OutputStream;
  stderr: OutputStream;
  /** Whether stdout is a terminal (colour is used only then). Default false. */
  isTTY?: boolean;
  /** The terminal's width in columns, when stdout is one (`keel trace` sizes its bars by it). */
  columns?: number;
  /** Environment for `NO_COLOR` and `KEEL_DEBUG`; `process.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Aborting it cancels a running `keel run` (main.ts wires Ctrl-C to it). */
  signal?: AbortSignal;
  /**
   * Ask the user a question and resolve with the answer; reject when no answer can come (end of input). With it
   * and `isTTY`, `keel run` asks to approve or deny the calls a run suspends on. main.ts wires it to stdin when
   * stdin is a terminal.
   */
  prompt?: Prompt;
  /** All of standard input, for `keel run <config> -`; main.ts reads the process's. */
  readStdin?: () => Promise<string>;
}

type Env = Readonly<Record<string, string | undefined>>;

const HELP = { help: { type: "boolean", short: "h" } } as const;
/** `--json` and `--help`: the flags of a command that prints a run or a list either way. */
const JSON_FLAGS = { json: { type: "boolean" }, ...HELP } as const;

const SERVE_FLAGS = {
  port: { type: "string" },
  host: { type: "string" },
  token: { type: "string" },
  "resume-interrupted": { type: "boolean" },
  "no-console": { type: "boolean" },
  ...HELP,
} as const;

/** The flags each command accepts; `parseArgs` option configs. */
const COMMANDS = {
  run: {
    agent: { type: "string" },
    session: { type: "string" },
    durable: { type: "boolean" },
    ...JSON_FLAGS,
  },
  validate: HELP,
  runs: {
    session: { type: "string" },
    status: { type: "string" },
    ...JSON_FLAGS,
  },
  checkpoints: JSON_FLAGS,
  trace: JSON_FLAGS,
  resume: { branch: { type: "boolean" }, ...JSON_FLAGS },
  decide: {
    value: { type: "string" },
    reason: { type: "string" },
    always: { type: "boolean" },
    ...JSON_FLAGS,
  },
  pending: JSON_FLAGS,
  policy: {
    agent: { type: "string" },
    session: { type: "string" },
    ...JSON_FLAGS,
  },
  runner: {
    ws: { type: "string" },
    profile: { type: "string" },
    author: { type: "string" },
    plugin: { type: "string" },
    ...HELP,
  },
  serve: SERVE_FLAGS,
  dev: SERVE_FLAGS,
  worker: {
    concurrency: { type: "string" },
    "grace-ms": { type: "string" },
    ...HELP,
  },
} as const;

type CommandName = keyof typeof COMMANDS;

const COMMAND_NAMES = [...Object.keys(COMMANDS), "help"];

/** The usage text `keel --help` prints. */
export const USAGE = `keel — run Keel agents from a config file

Usage:
  keel run <config> "<input>"|- [--agent ID] [--session ID] [--json] [--durable]
  keel validate <config>
  keel runs <config> [--session ID] [--status STATUS] [--json]
  keel trace <config> <runId> [--json]
  keel checkpoints <config> <runId> [--json]
  keel resume <config> <checkpointId> [--branch] [--json]
  keel decide <config> <runId> <toolCallId> approve|deny|result
              [--value JSON] [--reason TEXT] [--always] [--json]
  keel pending <config> <runId> [--json]
  keel policy <config> [--agent ID] [--session ID] [--json]
  keel serve <config> [--port N] [--host H] [--token T] [--resume-interrupted]
              [--no-console]
  keel runner <config> [--ws URL] [--profile seed|langbot-4.11] [--author A] [--plugin P]
  keel dev <config> [the options of serve]
  keel worker <config> [--concurrency N] [--grace-ms N]
  keel help | --help
  keel --version

Commands:
  run          Run an agent on the input and stream what it does: text, tool calls, a summary
  validate     Check a config file and list its agents
  runs         List the runs the config's session store knows (status: created, running, waiting, done),
               with each run's steps, duration, tokens and cost
  trace        Draw a run from its stored events as a timeline: steps, model calls with tokens and cost,
               tool calls, suspensions, decisions and errors, as bars by duration (--json: the timeline)
  checkpoints  List a run's checkpoints, oldest first, the latest marked
  resume       Resume a run from a checkpoint and stream it as run does: the run's latest checkpoint
               continues the run (unless another process is running it); with --branch, a new run starts
               from the checkpoint, whichever it is
  decide       Decide a call a suspended run waits on — approve it, deny it, or give its result — from any
               shell, and stream the run as it goes on as run does (it waits again while calls are undecided)
  pending      List the calls a suspended run waits on: id, tool, arguments and reason
  policy       Show an agent's effective permission policy: each rule with its source (runtime, config,
               skill, sandbox) and merge rule, and each tool's decision with the rule that made it
  serve        Serve the config's agents over HTTP (the runs API with resumable event streams) until
               Ctrl-C or SIGTERM: --port (default 8787), --host (default 127.0.0.1), --token (or
               KEEL_SERVER_TOKEN; needed off loopback), --resume-interrupted (resume durable runs a dead
               process left running, before listening); the web console is at its root (/) unless
               --no-console
  runner       Serve the config's agents as runners of the host-runner protocol (LangBot's AgentRunner
               protocol v1) over stdin/stdout, or to hosts connecting at --ws URL (e.g.
               ws://127.0.0.1:5400/control/ws); each agent is runner plugin:<author>/<plugin>/<agent id>
               (--author default keel, --plugin default agents)
  dev          serve, and reload the agents whenever the config file changes (a config that does not load
               is reported and the last good one keeps serving; top-level runtime, session and events
               settings need a restart)
  worker       Take runs off the config's queue ("queue": {"type": "bullmq"}) and execute them durably on its
               store until SIGTERM: --concurrency (runs at a time, default 4), --grace-ms (on SIGTERM, how
               long runs in flight may go on before they are handed back to the queue, default 10000)

Options for run:
  -              In place of the input: read it from stdin (keel run agent.json - < prompt.txt)
  --agent ID     The agent to run (default: the config's first agent)
  --session ID   Run in this session (default: a new one)
  --json         Print each stream chunk as one JSON line instead of readable output (also for resume);
                 an error that stops the command is a line {"kind":"error","error":{code,message,hint}} too
  --durable      Checkpoint after every model call, tool call and step, so that the run can be resumed
                 (from another process too, with a jsonl_file, sqlite or postgres session store)
  On a terminal, a run that suspends asks to approve (a) or deny (d) each pending call and goes on;
  elsewhere, or with --json, it exits 2 and the calls wait for keel decide.

Options for resume:
  --branch       Start a new run from the checkpoint instead of continuing its run; needed for any
                 checkpoint but the latest of a run that has not finished

Options for decide:
  --value JSON   approve: the value the call resumes with; result: the call's result (required)
  --reason TEXT  Why, recorded with the decision (a denied call's result tells the model)
  --always       Apply the same approve or deny to the tool's later calls in this run

Options for policy:
  --agent ID     The agent (default: the config's first agent)
  --session ID   Include the skills this session has loaded
  --json         Print the policy as one JSON value (what runtime.getEffectivePolicy returns)

Exit codes: 0 completed, 2 suspended (a tool call awaits approval), 1 any other outcome or error,
  130 interrupted (Ctrl-C cancels the run; a second Ctrl-C quits without waiting for the cleanup).
  checkpoints, trace, resume, decide and pending also exit 2 for a run or checkpoint the store does not know,
  resume for a checkpoint it refuses (another agent shape or schema version, the latest of a finished
  run, one the run went past without --branch, a run another process is continuing), and decide for a decision it refuses (an unknown or already decided call, a run not waiting).
Environment: NO_COLOR=1 turns colour off; KEEL_DEBUG=1 prints stack traces.
`;

/** A command-line mistake: printed with a pointer to the usage, exit 1. */
class UsageError extends Error {}

/**
 * The `keel` command line, callable in-process: parses `argv` (without `node` and the script), dispatches to
 * the command and resolves with the exit code. It never throws and prints stack traces only with KEEL_DEBUG=1.
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
 */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  const env = io.env ?? process.env;
  // Keel's warnings go to the console by default; the CLI's stderr is where they belong (and tests capture it).
  const previousLogger = setLogger(streamLogger(io.stderr));
  try {
    return await dispatch(argv, io, env);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`${error.message}\nRun 'keel --help' for usage.\n`);
    } else {
      const { describeError } = await import("./commands/run.js");
      io.stderr.write(`${describeError(error, env.KEEL_DEBUG === "1")}\n`);
    }
    return 1;
  } finally {
    setLogger(previousLogger);
  }
}

/** Each command's modules load when it runs, so `keel --version` and `keel --help` load none of the runtime. */
async function dispatch(argv: readonly string[], io: CliIO, env: Env): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    io.stderr.write(USAGE);
    return 1;
  }
  if (first === "--help" || first === "-h" || first === "help") {
    io.stdout.write(USAGE);
    return 0;
  }
  if (first === "--version" || first === "-v") {
    io.stdout.write(`${readVersion()}\n`);
    return 0;
  }
  if (!(first in COMMANDS)) throw new UsageError(unknownCommandMessage(first));
  const command = first as CommandName;
  const { values, positionals } = parseCommandArgs(command, rest);
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  if (command === "validate") {
    if (positionals.length !== 1) throw new UsageError("Usage: keel validate <config>");
    const { validateCommand } = await import("./commands/validate.js");
    return validateCommand({ configPath: positionals[0]!, stdout: io.stdout, stderr: io.stderr });
  }
  if (command === "serve" || command === "dev") {
    if (positionals.length !== 1)
      throw new UsageError(
        `Usage: keel ${command} <config> [--port N] [--host H] [--token T] [--resume-interrupted] [--no-console]`,
      );
    const port = values.port === undefined ? 8787 : Number(values.port);
    if (typeof values.port === "string" && !/^\d{1,5}$/.test(values.port))
      throw new UsageError(`--port must be a port number, not '${values.port}'`);
    const token = typeof values.token === "string" ? values.token : env.KEEL_SERVER_TOKEN || undefined;
    const { serveCommand } = await import("./commands/serve.js");
    return serveCommand({
      configPath: positionals[0]!,
      port,
      host: typeof values.host === "string" ? values.host : "127.0.0.1",
      token,
      resumeInterrupted: values["resume-interrupted"] === true,
      console: values["no-console"] !== true,
      watch: command === "dev",
      stdout: io.stdout,
      stderr: io.stderr,
      ...(io.signal === undefined ? {} : { signal: io.signal }),
    });
  }
  if (command === "worker") {
    if (positionals.length !== 1)
      throw new UsageError("Usage: keel worker <config> [--concurrency N] [--grace-ms N]");
    const { workerCommand } = await import("./commands/worker.js");
    return workerCommand({
      configPath: positionals[0]!,
      concurrency: positiveNumber(values.concurrency, "--concurrency", 4),
      graceMs: positiveNumber(values["grace-ms"], "--grace-ms", 10_000),
      stdout: io.stdout,
      stderr: io.stderr,
      ...(io.signal === undefined ? {} : { signal: io.signal }),
    });
  }
  if (command === "runner") {
    if (positionals.length !== 1)
      throw new UsageError(
        "Usage: keel runner <config> [--ws URL] [--profile seed|langbot-4.11] [--author A] [--plugin P]",
      );
    const profile = values.profile;
    if (profile !== undefined && profile !== "seed" && profile !== "langbot-4.11") {
      throw new UsageError(`--profile must be seed or langbot-4.11, not '${String(profile)}'`);
    }
    const { runnerCommand } = await import("./commands/runner.js");
    return runnerCommand({
      configPath: positionals[0]!,
      stderr: io.stderr,
      ...(typeof values.ws === "string" ? { ws: values.ws } : {}),
      ...(profile === undefined ? {} : { profile }),
      ...(typeof values.author === "string" ? { pluginAuthor: values.author } : {}),
      ...(typeof values.plugin === "string" ? { pluginName: values.plugin } : {}),
      ...(io.signal === undefined ? {} : { signal: io.signal }),
    });
  }
  if (command === "runs") {
    if (positionals.length !== 1)
      throw new UsageError("Usage: keel runs <config> [--session ID] [--status STATUS] [--json]");
    const status = typeof values.status === "string" ? values.status : undefined;
    if (status !== undefined && !["created", "running", "waiting", "done"].includes(status)) {
      throw new UsageError(`--status must be created, running, waiting or done, not '${status}'`);
    }
    const { runsCommand } = await import("./commands/runs.js");
    return runsCommand({
      configPath: positionals[0]!,
      ...(typeof values.session === "string" ? { sessionId: values.session } : {}),
      ...(status === undefined ? {} : { status: status as RunStatus }),
      json: values.json === true,
      stdout: io.stdout,
    });
  }
  if (command === "policy") {
    if (positionals.length !== 1)
      throw new UsageError("Usage: keel policy <config> [--agent ID] [--session ID] [--json]");
    const { policyCommand } = await import("./commands/policy.js");
    return policyCommand({
      configPath: positionals[0]!,
      ...(typeof values.agent === "string" ? { agentId: values.agent } : {}),
      ...(typeof values.session === "string" ? { sessionId: values.session } : {}),
      json: values.json === true,
      stdout: io.stdout,
    });
  }
  if (command === "trace") {
    if (positionals.length !== 2) throw new UsageError("Usage: keel trace <config> <runId> [--json]");
    const { traceCommand } = await import("./commands/trace.js");
    return traceCommand({
      configPath: positionals[0]!,
      runId: positionals[1]!,
      json: values.json === true,
      stdout: io.stdout,
      stderr: io.stderr,
      isTTY: io.isTTY === true,
      ...(io.columns === undefined ? {} : { columns: io.columns }),
      env,
    });
  }
  if (command === "checkpoints" || command === "pending") {
    if (positionals.length !== 2) throw new UsageError(`Usage: keel ${command} <config> <runId> [--json]`);
    const listing =
      command === "checkpoints"
        ? (await import("./commands/checkpoints.js")).checkpointsCommand
        : (await import("./commands/decide.js")).pendingCommand;
    return listing({
      configPath: positionals[0]!,
      runId: positionals[1]!,
      json: values.json === true,
      stdout: io.stdout,
      stderr: io.stderr,
    });
  }
  const output = {
    json: values.json === true,
    stdout: io.stdout,
    stderr: io.stderr,
    isTTY: io.isTTY === true,
    env,
    ...(io.signal === undefined ? {} : { signal: io.signal }),
    ...(io.prompt === undefined ? {} : { prompt: io.prompt }),
  };
  if (command === "resume") {
    if (positionals.length !== 2)
      throw new UsageError("Usage: keel resume <config> <checkpointId> [--branch] [--json]");
    const { resumeCommand } = await import("./commands/resume.js");
    return resumeCommand({
      ...output,
      configPath: positionals[0]!,
      checkpointId: positionals[1]!,
      branch: values.branch === true,
    });
  }
  if (command === "decide") {
    const [configPath, runId, toolCallId, action] = positionals;
    if (positionals.length !== 4 || !DECISION_ACTIONS.includes(action as ToolDecision["action"])) {
      throw new UsageError(
        positionals.length === 4
          ? `The decision is approve, deny or result, not '${action}'`
          : `Usage: keel decide <config> <runId> <toolCallId> approve|deny|result [--value JSON] [--reason TEXT] [--always] [--json]`,
      );
    }
    const decision: ToolDecision = { toolCallId: toolCallId!, action: action as ToolDecision["action"] };
    if (typeof values.value === "string") decision.value = parseJsonValue(values.value);
    if (typeof values.reason === "string") decision.reason = values.reason;
    if (values.always === true) decision.always = true;
    const { decideCommand } = await import("./commands/decide.js");
    return decideCommand({ ...output, configPath: configPath!, runId: runId!, decision });
  }
  const [configPath, ...words] = positionals;
  if (configPath === undefined || words.length === 0) {
    throw new UsageError(
      'Usage: keel run <config> "<input>"|- [--agent ID] [--session ID] [--json] [--durable]',
    );
  }
  const agentId = typeof values.agent === "string" ? values.agent : undefined;
  const sessionId = typeof values.session === "string" ? values.session : undefined;
  const { runCommand } = await import("./commands/run.js");
  return runCommand({
    configPath,
    // An unquoted input arrives as several words; joining them is what the user meant.
    input: words.length === 1 && words[0] === "-" ? await inputFromStdin(io) : words.join(" "),
    ...(agentId === undefined ? {} : { agentId }),
    ...(sessionId === undefined ? {} : { sessionId }),
    durable: values.durable === true,
    ...output,
  });
}

/** `keel run <config> -`: the input is standard input, without the newline that ends its last line. */
async function inputFromStdin(io: CliIO): Promise<string> {
  const text = (await io.readStdin?.())?.replace(/\r?\n$/, "") ?? "";
  if (text.trim() === "") {
    throw new UsageError("keel run <config> - reads the input from stdin, and stdin was empty");
  }
  return text;
}

const DECISION_ACTIONS: readonly ToolDecision["action"][] = ["approve", "deny", "result"];

/** `--value`'s JSON; anything else is a usage mistake with an example. */
function parseJsonValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(
      `--value must be JSON, not '${text}': quote text as a JSON string, e.g. --value '"sent by hand"'`,
    );
  }
}

function unknownCommandMessage(command: string): string {
  if (command.startsWith("-")) {
    const near = nearMatch(command, ["--help", "--version"]);
    return `Unknown option '${command}'.${near ? ` Did you mean '${near}'?` : ""}`;
  }
  const near = nearMatch(command, COMMAND_NAMES);
  return `Unknown command '${command}'.${near ? ` Did you mean '${near}'?` : ` Commands: ${COMMAND_NAMES.join(", ")}.`}`;
}

/**
 * Parse one command's flags. `parseArgs` runs non-strict so that an unknown or malformed flag gets Keel's own
 * message with a near match instead of node's generic one.
 */
function parseCommandArgs(
  command: CommandName,
  args: readonly string[],
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const options = COMMANDS[command];
  const { tokens } = parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string | boolean | undefined> = {};
  const positionals: string[] = [];
  const flags = Object.keys(options).map((name) => `--${name}`);
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const spec = (options as Record<string, { type: "string" | "boolean" }>)[token.name];
    if (spec === undefined) {
      const near = nearMatch(token.rawName, flags);
      throw new UsageError(
        `Unknown option '${token.rawName}' for 'keel ${command}'.${near ? ` Did you mean '${near}'?` : ` Options: ${flags.join(", ")}.`}`,
      );
    }
    if (spec.type === "string") {
      // Non-strict parsing takes the next argument as the value even when it is a flag (`--agent --json`).
      const flagAsValue = !token.inlineValue && token.value?.startsWith("-") === true;
      if (token.value === undefined || token.value === "" || flagAsValue) {
        throw new UsageError(`Option '${token.rawName}' needs a value, e.g. ${token.rawName} ID`);
      }
      values[token.name] = token.value;
    } else {
      if (token.inlineValue) throw new UsageError(`Option '${token.rawName}' takes no value`);
      values[token.name] = true;
    }
  }
  return { values, positionals };
}

/** The package's version, from Keel's own package.json. */
function readVersion(): string {
  const manifest = path.join(packageRoot(), "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

function streamLogger(stream: OutputStream): Logger {
  const write = (level: string, message: string, details?: Record<string, unknown>) => {
    let extra = "";
    try {
      extra = details ? ` ${JSON.stringify(details)}` : "";
    } catch {
      // A warning must never fail the command it warns about.
    }
    stream.write(`[keel] ${level}: ${message}${extra}\n`);
  };
  return {
    debug: () => {},
    info: () => {},
    warn: (message, details) => write("warning", message, details),
    error: (message, details) => write("error", message, details),
  };
}

/** A whole number flag's value, or its default when the flag is absent. */
function positiveNumber(value: unknown, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !/^\d{1,9}$/.test(value) || Number(value) === 0)
    throw new UsageError(`${flag} must be a positive whole number, not '${String(value)}'`);
  return Number(value);
}
