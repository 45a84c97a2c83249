import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { type Context, Hono } from "hono";
import { packageRoot } from "../util/package-root.js";
import type { ServerEnv } from "./runs-routes.js";
import { errorResponse, ServerRequestError } from "./server-error.js";

export interface ConsoleOptions {
  /** The built console (its `index.html` and `assets/`). Default: the one `npm run build` puts in `dist/console`. */
  directory?: string;
}

interface Asset {
  body: Uint8Array;
  gzipped: Uint8Array;
  type: string;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/**
 * The page may only load itself and talk to its own server. The token may sit in the address once (`?token=`):
 * no referrer carries it away, and no other site may frame the page to read it.
 */
const PAGE_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

/**
 * The web console: its page at the root and its hashed assets under `assets/`, read once from the built folder
 * and kept gzipped in memory (the whole console is a few tens of KB). Serving it needs no token — it holds no
 * data; the page asks for the token and sends it to the API like any client.
 */
export function createConsoleApp(
  options: ConsoleOptions & { guard: (c: Context) => void; basePath: string },
): Hono<ServerEnv> {
  const directory = options.directory ?? defaultConsoleDirectory();
  let loaded: Promise<Map<string, Asset>> | undefined;
  const assets = () => {
    loaded ??= loadAssets(directory);
    return loaded;
  };
  const app = new Hono<ServerEnv>();
  const serve = async (c: Context, name: string) => {
    options.guard(c);
    const asset = (await assets()).get(name);
    if (asset === undefined) {
      if (name !== "index.html")
        throw new ServerRequestError(404, `The console has no file '${name}'`, {
          code: "route.unknown",
          hint: "Reload the console: its files change with each build",
        });
      throw new ServerRequestError(404, "The console is not built", {
        code: "console.not_built",
        hint: `Run 'npm run build' (it builds the console into ${directory})`,
      });
    }
    const page = name === "index.html";
    const gzip = /\bgzip\b/.test(c.req.header("accept-encoding") ?? "");
    return new Response((gzip ? asset.gzipped : asset.body) as Uint8Array<ArrayBuffer>, {
      headers: {
        "content-type": asset.type,
        // Asset names carry a hash of their content: a new build has new names, so they never go stale.
        "cache-control": page ? "no-cache" : "public, max-age=31536000, immutable",
        vary: "accept-encoding",
        ...(gzip ? { "content-encoding": "gzip" } : {}),
        ...(page ? PAGE_HEADERS : { "x-content-type-options": "nosniff" }),
      },
    });
  };
  // The page reaches the API by relative paths: under a base path it is the folder, with its slash.
  const folder = options.basePath.replace(/\/$/, "");
  app.get(`${folder}/`, (c) => serve(c, "index.html"));
  if (folder !== "")
    app.get(folder, (c) => {
      const url = new URL(c.req.url);
      return c.redirect(`${url.pathname}/${url.search}`, 308);
    });
  app.get(`${folder}/assets/:file`, (c) => serve(c, `assets/${c.req.param("file")}`));
  app.onError((error) => errorResponse(error));
  return app;
}

/** The console the build put in Keel's `dist/console`, whether the server runs from the package or its sources. */
function defaultConsoleDirectory(): string {
  return path.join(packageRoot(), "dist", "console");
}

async function loadAssets(directory: string): Promise<Map<string, Asset>> {
  const assets = new Map<string, Asset>();
  if (!existsSync(path.join(directory, "index.html"))) return assets;
  const names = ["index.html", ...(await readdir(path.join(directory, "assets"))).map((n) => `assets/${n}`)];
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (type === undefined) continue;
    const body = new Uint8Array(await readFile(path.join(directory, name)));
    assets.set(name, { body, gzipped: new Uint8Array(gzipSync(body, { level: 9 })), type });
  }
  return assets;
}
