// The checks `npm test` runs before the tests, in two lanes at once: the build (which the tests need) then the
// layering and the event docs in one, the type check then the lint in the other. Each is one process using one
// core at a time; run one after another they left the second core idle for about half a minute. A step's output
// is printed whole once it ends, so the two lanes never interleave; the script fails if any step failed.
import { spawn } from "node:child_process";

const LANES = [
  ["build", "deps", "docs:check"],
  ["typecheck", "lint"],
];
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

/** Run `npm run <script>`, its stdout and stderr collected together; resolves whether it passed. */
function runScript(script) {
  return new Promise((resolve) => {
    const child = spawn(npm, ["run", "--silent", script], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", (error) => {
      output += `${error.message}\n`;
    });
    child.on("close", (code) => {
      const passed = code === 0;
      process.stdout.write(`\n> npm run ${script}${passed ? "" : ` (failed, exit ${code})`}\n${output}`);
      resolve(passed);
    });
  });
}

/** A lane's steps one after another; a failed step ends its lane, as `&&` would. */
async function runLane(scripts) {
  for (const script of scripts) if (!(await runScript(script))) return false;
  return true;
}

const results = await Promise.all(LANES.map(runLane));
if (results.includes(false)) process.exitCode = 1;
