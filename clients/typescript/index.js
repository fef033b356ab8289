// @semfs/client: talks to the semfs daemon's control socket (HTTP/JSON over a
// Unix socket) with node:http only, so the package has no runtime
// dependencies. Plain ESM JavaScript with hand-written types (index.d.ts):
// nothing to compile, so `npm pack` ships exactly what the tests ran.

import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * An error from the daemon (code is its stable error code, e.g. "not_found",
 * "invalid", "invalid_path") or from reaching it (code "unreachable"), or
 * "embed_failed" when the app's embed hook threw, or "bad_response" when the
 * socket answered something that is not the daemon's JSON.
 */
export class SemanticFsError extends Error {
  constructor(code, message, { status, socketPath, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "SemanticFsError";
    this.code = code;
    this.status = status;
    this.socketPath = socketPath;
  }
}

/**
 * The daemon's default control socket, as `semfs` resolves it for clients:
 * BERTH_SEMANTIC_FS_SOCKET, else the first socket that exists among the
 * daemon's default locations (/var/berth/semantic-fs.sock when it runs as
 * root, $XDG_RUNTIME_DIR/semfs.sock, ~/.local/state/semfs/semfs.sock), else
 * where a daemon started by this user would listen.
 */
export function defaultSocketPath(env = process.env) {
  if (env.BERTH_SEMANTIC_FS_SOCKET) return env.BERTH_SEMANTIC_FS_SOCKET;
  const berth = "/var/berth/semantic-fs.sock";
  const state = env.XDG_STATE_HOME || path.join(os.homedir() || os.tmpdir(), ".local", "state");
  const stateSock = path.join(state, "semfs", "semfs.sock");
  const runtimeSock = env.XDG_RUNTIME_DIR ? path.join(env.XDG_RUNTIME_DIR, "semfs.sock") : "";
  for (const p of [berth, runtimeSock, stateSock]) {
    if (p && fs.existsSync(p)) return p;
  }
  if (writableOrCreatable("/var/berth")) return berth;
  if (runtimeSock && writableOrCreatable(env.XDG_RUNTIME_DIR)) return runtimeSock;
  return stateSock;
}

function writableOrCreatable(dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(d)) {
      try {
        fs.accessSync(d, fs.constants.W_OK | fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }
    if (d === path.dirname(d)) return false;
  }
}

/**
 * The text the daemon embeds for a file's tags (embed.TagText in the Go
 * code): "task. app1, app2. path words". An embed hook gets exactly this, so
 * the vectors it returns for tags and for queries live in the same space as
 * the daemon's own.
 */
export function tagText(task, relatedApps, filePath) {
  const parts = [];
  const t = String(task ?? "").split(/\s+/).filter(Boolean).join(" ");
  if (t) parts.push(t);
  const apps = (relatedApps ?? []).map((a) => String(a).trim()).filter(Boolean);
  if (apps.length) parts.push(apps.join(", "));
  const w = pathWords(String(filePath ?? ""));
  if (w) parts.push(w);
  return parts.join(". ");
}

function pathWords(p) {
  const base = p.slice(p.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  // Go's path.Ext: the suffix from the last dot; a dot-file's whole name is kept.
  if (dot >= 0 && base.slice(dot) !== base) p = p.slice(0, p.length - (base.length - dot));
  const w = p.replace(/[/\\_\-.]/g, " ").split(/\s+/).filter(Boolean).join(" ");
  if (w) return w;
  return p.split(/\s+/).filter(Boolean).join(" ");
}

export class SemanticFsClient {
  /**
   * @param {object} [options]
   * @param {string} [options.socketPath] control socket; default defaultSocketPath()
   * @param {string} [options.root] where the app sees the backing directory (its
   *   mount); absolute paths under it are sent relative. Default BERTH_CONTEXT_DATA.
   * @param {(text: string) => Promise<{model: string, vector: number[]}>} [options.embed]
   * @param {number} [options.timeoutMs] per request; default 30000
   */
  constructor(options = {}) {
    this.socketPath = options.socketPath || defaultSocketPath();
    this.root = options.root ?? process.env.BERTH_CONTEXT_DATA ?? "";
    this.embed = options.embed;
    this.timeoutMs = options.timeoutMs ?? 30000;
  }

  /**
   * Binds this process's uid to app, so files it creates through the mount
   * are attributed to it. An outage or refusal is warned about, not thrown:
   * the app keeps working, its files stay unattributed.
   */
  async register({ app }) {
    try {
      return await this.#request("POST", "/v1/register", { app });
    } catch (err) {
      console.warn(`semfs: register ${JSON.stringify(app)} failed, files will not be attributed: ${err.message}`);
      return null;
    }
  }

  /** Replaces the tags of the file at filePath. Throws SemanticFsError. */
  async tag(filePath, { task = "", relatedApps = [] } = {}) {
    const rel = this.#relative(filePath);
    const body = { path: rel, task, relatedApps };
    const text = tagText(task, relatedApps, rel);
    if (this.embed && text) body.embedding = await this.#embed(text);
    return toRecord(await this.#request("POST", "/v1/tag", body));
  }

  /** Files matching text, best first; limit <= 0 or absent: every match. Throws SemanticFsError. */
  async query(text, limit, { rank, explain, scope } = {}) {
    const body = { text };
    if (limit !== undefined && limit !== null) body.limit = limit;
    if (rank) body.rank = rank;
    if (scope) body.scope = scope;
    if (explain) body.explain = true;
    if (this.embed && String(text).trim()) body.embedding = await this.#embed(text);
    const out = await this.#request("POST", "/v1/query", body);
    if (!out || !Array.isArray(out.results)) {
      throw new SemanticFsError("bad_response", "the daemon's query answer has no results list", { socketPath: this.socketPath });
    }
    return out.results.map(toRecord);
  }

  /**
   * Lines of the export's files matching pattern (Go RE2 syntax; a literal with
   * fixed), sorted by path then line, among the files this process's uid may
   * read: POST /v1/grep. Paths given as absolute paths under root are sent
   * relative. Throws SemanticFsError (code "invalid" for a bad pattern).
   * @param {string} pattern
   * @param {{fixed?: boolean, ignoreCase?: boolean, paths?: string[], limit?: number, context?: number, all?: boolean, counts?: boolean}} [options]
   */
  async grep(pattern, { fixed, ignoreCase, paths, limit, context, all, counts } = {}) {
    const body = { pattern: String(pattern) };
    if (fixed) body.fixed = true;
    if (ignoreCase) body.ignoreCase = true;
    if (paths && paths.length) body.paths = paths.map((p) => this.#relative(p));
    if (limit !== undefined && limit !== null) body.limit = limit;
    if (context) body.context = context;
    if (all) body.all = true;
    if (counts) body.counts = true;
    const out = await this.#request("POST", "/v1/grep", body);
    if (!out || !Array.isArray(out.matches)) {
      throw new SemanticFsError("bad_response", "the daemon's grep answer has no matches list", { socketPath: this.socketPath });
    }
    return out;
  }

  /**
   * The change feed as an async iterator: every change after `since`, in
   * order, as it happens (long polls of `pollMs`, 30 s by default), until
   * `signal` aborts (the loop then ends quietly) or the caller breaks out.
   * Without `since` it starts from now. Each change carries `cursor`: resume
   * from the cursor of the last change you handled and nothing is lost (the
   * rest of its page may come again). A cursor the daemon no longer holds
   * yields `{reset: true, cursor}` once: list the tree again, the changes
   * that follow go on from there. `paths` filters with globs ("src/**").
   */
  async *changes({ since, signal, paths, pollMs = 30000, limit } = {}) {
    let cursor = since;
    const query = (c) => {
      const q = new URLSearchParams();
      if (c) q.set("since", c);
      if (c) q.set("timeout", `${Math.max(0, Math.floor(pollMs))}ms`);
      if (limit) q.set("limit", String(limit));
      if (paths && paths.length) q.set("paths", paths.join(","));
      return `/v1/changes?${q}`;
    };
    const get = async (c) => {
      try {
        return await this.#request("GET", query(c), undefined, { signal, timeoutMs: pollMs + this.timeoutMs });
      } catch (err) {
        if (signal?.aborted) return null;
        throw err;
      }
    };
    if (!cursor) {
      const first = await get("");
      if (!first) return;
      cursor = first.cursor;
    }
    while (!signal?.aborted) {
      const page = await get(cursor);
      if (!page) return;
      if (typeof page.cursor !== "string" || !Array.isArray(page.changes)) {
        throw new SemanticFsError("bad_response", "the daemon's changes answer has no cursor or changes list", { socketPath: this.socketPath });
      }
      if (page.reset) {
        cursor = page.cursor;
        yield { reset: true, cursor };
        continue;
      }
      const n = page.changes.length;
      for (let i = 0; i < n; i++) {
        yield { ...page.changes[i], cursor: i === n - 1 ? page.cursor : cursor };
      }
      cursor = page.cursor;
    }
  }

  #relative(p) {
    p = String(p);
    if (this.root && path.isAbsolute(p)) {
      const rel = path.relative(this.root, p);
      if (rel && !rel.startsWith("..") && !path.isAbsolute(rel)) return rel.split(path.sep).join("/");
    }
    return p;
  }

  async #embed(text) {
    let v;
    try {
      v = await this.embed(text);
    } catch (err) {
      throw new SemanticFsError("embed_failed", `the embed hook failed: ${err?.message ?? err}`, { cause: err });
    }
    if (!v || typeof v.model !== "string" || !v.vector || typeof v.vector.length !== "number") {
      throw new SemanticFsError("embed_failed", "the embed hook must return {model, vector}");
    }
    return { model: v.model, vector: Array.from(v.vector) };
  }

  #request(method, urlPath, body, { signal, timeoutMs = this.timeoutMs } = {}) {
    const socketPath = this.socketPath;
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const unreachable = (err) =>
        reject(new SemanticFsError("unreachable", `cannot reach the semfs daemon at ${socketPath}: ${err.message} (is \`semfs serve\` running?)`, { socketPath, cause: err }));
      const req = http.request(
        {
          socketPath,
          method,
          path: urlPath,
          headers: payload ? { "Content-Type": "application/json", "Content-Length": payload.length } : {},
          agent: false,
          signal,
        },
        (res) => {
          const chunks = [];
          res.on("data", (c) => chunks.push(c));
          res.on("error", unreachable);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let json;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              if (json === undefined) {
                reject(new SemanticFsError("bad_response", `${method} ${urlPath}: the answer is not JSON`, { status, socketPath }));
              } else {
                resolve(json);
              }
              return;
            }
            const e = json && json.error;
            const code = e && typeof e.code === "string" && e.code ? e.code : "http";
            const msg = e && typeof e.message === "string" ? e.message : text.trim() || `HTTP ${status}`;
            reject(new SemanticFsError(code, msg, { status, socketPath }));
          });
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
      req.on("error", unreachable);
      req.end(payload);
    });
  }
}

// toRecord gives the SDK's shape: optional fields are left out when empty.
function toRecord(r) {
  if (!r || typeof r.path !== "string") {
    throw new SemanticFsError("bad_response", "the daemon's record has no path");
  }
  const out = { path: r.path };
  if (r.createdBy) out.createdBy = r.createdBy;
  if (r.task) out.task = r.task;
  if (Array.isArray(r.relatedApps) && r.relatedApps.length) out.relatedApps = r.relatedApps;
  out.createdAt = r.createdAt;
  out.updatedAt = r.updatedAt;
  if (typeof r.score === "number") out.score = r.score;
  if (r.explain && typeof r.explain === "object") out.explain = r.explain;
  if (Array.isArray(r.passages) && r.passages.length) out.passages = r.passages;
  return out;
}
