/**
 * Child of scenario A1, run with `--trace-gc-nvp --expose-gc`: warms an S1 implementation up, then does `runs`
 * runs between two forced collections, printing markers around them on stdout, where V8 also writes one line
 * per collection with the bytes allocated since the one before.
 */
import { loopImpls } from "../loop-impls.mjs";

const [implName, runsText] = process.argv.slice(2);
const runs = Number(runsText);
const impl = loopImpls(10).find((candidate) => candidate.impl === implName);
const instance = await impl.open();
for (let index = 0; index < 200; index++) await instance.runOnce();
globalThis.gc();
process.stdout.write("A1-BEGIN\n");
const start = performance.now();
for (let index = 0; index < runs; index++) await instance.runOnce();
const wallMs = performance.now() - start;
process.stdout.write(`A1-WALL ${wallMs}\n`);
globalThis.gc();
process.stdout.write("A1-END\n");
await instance.close();
