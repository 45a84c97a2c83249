#!/usr/bin/env node
/** The `keel` bin: wires the process to {@link main}, which holds all parsing and dispatch. */
import { createInterface } from "node:readline";
import { main } from "./cli.js";

/** What the shell expects of a process ended by Ctrl-C: 128 + SIGINT. */
const INTERRUPTED_EXIT_CODE = 130;

const controller = new AbortController();
let interrupted = false;
// The first Ctrl-C cancels the run so it ends with a summary and the runtime closes; cleanup can take a while
// (a tool that finishes what it started), so a second Ctrl-C exits at once.
process.once("SIGINT", () => {
  interrupted = true;
  process.stderr.write("\nInterrupted: cancelling and cleaning up (press Ctrl-C again to force quit)\n");
  process.once("SIGINT", () => process.exit(INTERRUPTED_EXIT_CODE));
  controller.abort();
});

// Keel's deadlines do not hold a process open, so that parked runs cost nothing; a command, though, is here
// to see its run end. Without this a tool that never settles would leave node with nothing to wait for: an
// exit 13 before the step timeout fires, the run never finished.
const keepAlive = setInterval(() => {}, 1 << 30);

let stdoutGone = false;
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  // The reader went away (`keel run … --json | head`): cancel the run and drop further output quietly
  // instead of crashing with an unhandled 'error' event.
  stdoutGone = true;
  controller.abort();
});

/**
 * One question on the terminal: a readline interface that lives for the question only, so that stdin does not
 * keep the process alive after it. End of input or Ctrl-C rejects: the calls asked about stay undecided.
 */
function prompt(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const terminal = createInterface({ input: process.stdin, output: process.stdout });
    let answered = false;
    terminal.on("SIGINT", () => terminal.close());
    terminal.once("close", () => {
      if (!answered) {
        process.stdout.write("\n");
        reject(new Error("No answer: the input ended"));
      }
    });
    terminal.question(question, (answer) => {
      answered = true;
      terminal.close();
      resolve(answer);
    });
  });
}

/** All of stdin, for `keel run <config> -`. */
async function readStdin(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin.setEncoding("utf8")) text += chunk;
  return text;
}

/** Resolves once what was written to the stream before has been handed to the system. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve();
    else stream.write("", () => resolve());
  });
}

const code = await main(process.argv.slice(2), {
  stdout: { write: (text: string) => stdoutGone || process.stdout.write(text) },
  stderr: process.stderr,
  isTTY: process.stdout.isTTY === true,
  ...(process.stdout.columns ? { columns: process.stdout.columns } : {}),
  env: process.env,
  signal: controller.signal,
  readStdin,
  ...(process.stdin.isTTY === true ? { prompt } : {}),
});
clearInterval(keepAlive);
if (!stdoutGone) await flushed(process.stdout);
await flushed(process.stderr);
// The command is over once main returns: a tool still in flight after a timeout or a cancellation, which the
// run has already given up on, must not keep the process (and the shell) waiting.
process.exit(interrupted ? INTERRUPTED_EXIT_CODE : code);
