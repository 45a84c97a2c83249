import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

const here = fileURLToPath(new URL(".", import.meta.url));

/**
 * The web console, built into dist/console for `keel serve` to serve. Relative asset paths, so the page works
 * under any base path the server is mounted at; no module-preload polyfill, as every browser it targets has it.
 */
export default defineConfig({
  root: here,
  base: "./",
  plugins: [preact({ devtoolsInProd: false, prefreshEnabled: false })],
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
});
