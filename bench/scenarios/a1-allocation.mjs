/**
 * A1 allocation per step: the S1 workload in a child process under `--trace-gc-nvp`, which reports for every
 * collection the bytes allocated since the previous one and its pause. Summed over N runs (between two forced
 * collections, the last one's pause left out), that gives bytes allocated per step, collections per run and
 * the share of the wall time the main thread spent paused in GC. Byte counts are deterministic up to a few
 * per cent; the GC share is a time and suffers from load like every wall figure.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { median, round } from "../measure.mjs";

const CHILD = fileURLToPath(new URL("../children/s1-allocation-child.mjs", import.meta.url));
const STEPS_PER_RUN = 11;

function runChild(impl, runs) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--trace-gc-nvp", "--expose-gc", CHILD, impl, String(runs)],
      { maxBuffer: 256 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

/** Sum what the collections between the markers report. */
function parse(stdout, runs) {
  const lines = stdout.split("\n");
  const begin = lines.indexOf("A1-BEGIN");
  const end = lines.indexOf("A1-END");
  let allocated = 0;
  let survived = 0;
  let pauseMs = 0;
  let collections = 0;
  let wallMs = Number.NaN;
  let timed = true;
  for (const line of lines.slice(begin + 1, end)) {
    if (line.startsWith("A1-WALL ")) {
      wallMs = Number(line.slice(8));
      timed = false;
      continue;
    }
    const bytes = /\ballocated=(\d+)/.exec(line);
    if (bytes === null) continue;
    allocated += Number(bytes[1]);
    survived += Number(/\bnew_space_survived=(\d+)/.exec(line)?.[1] ?? 0);
    if (!timed) continue;
    collections++;
    pauseMs += Number(/\bpause=([\d.]+)/.exec(line)?.[1] ?? 0);
  }
  return {
    bytesPerStep: allocated / (runs * STEPS_PER_RUN),
    survivedBytesPerRun: survived / runs,
    collectionsPerRun: collections / runs,
    gcSharePercent: (100 * pauseMs) / wallMs,
  };
}

export async function a1Allocation({ quick, log }) {
  const reps = quick ? 1 : 5;
  const plans = [
    { impl: "keel", runs: quick ? 500 : 5000 },
    { impl: "hand-written", runs: quick ? 5000 : 50_000 },
  ];
  const lines = [];
  for (const { impl, runs } of plans) {
    const samples = [];
    for (let rep = 0; rep < reps; rep++) {
      const figures = parse(await runChild(impl, runs), runs);
      samples.push(figures);
      log(
        `  ${impl} rep ${rep + 1}/${reps}: ${Math.round(figures.bytesPerStep)} B/step, ` +
          `${Math.round(figures.survivedBytesPerRun)} B/run survived scavenges, GC ${figures.gcSharePercent.toFixed(1)} % of wall`,
      );
    }
    lines.push({
      scenario: "A1",
      impl,
      bytesPerStep: Math.round(median(samples.map((figures) => figures.bytesPerStep))),
      survivedBytesPerRun: Math.round(median(samples.map((figures) => figures.survivedBytesPerRun))),
      collectionsPerRun: round(median(samples.map((figures) => figures.collectionsPerRun))),
      gcSharePercent: round(median(samples.map((figures) => figures.gcSharePercent)), 1),
      runs,
    });
  }
  return lines;
}
