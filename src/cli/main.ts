#!/usr/bin/env node
/** The `keel` bin: wires the process to {@link main}, which holds all parsing and dispatch. */
import { createInterface } from "node:readline";
import { main } from "./cli.js";

const controller = new AbortController();
// The first Ctrl-C cancels the run so it ends with a summary and the runtime closes; `once` restores node's
// default handler, so a second Ctrl-C exits at once.
process.once("SIGINT", () => controller.abort());

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

process.exitCode = await main(process.argv.slice(2), {
  stdout: { write: (text: string) => stdoutGone || process.stdout.write(text) },
  stderr: process.stderr,
  isTTY: process.stdout.isTTY === true,
  env: process.env,
  signal: controller.signal,
  ...(process.stdin.isTTY === true ? { prompt } : {}),
});
