// @semfs/client against the real daemon: the SDK's example app, the SDK's
// result shape, the outage rules, the embed hook and the in-process model.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { SemanticFsClient, SemanticFsError, tagText } from "@semfs/client";
import { repoDir, startDaemon, tempDir } from "./daemon.mjs";

const run = promisify(execFile);
const exampleApp = path.join(path.dirname(new URL(import.meta.url).pathname), "example", "app.mjs");

const sdkKeys = new Set(["path", "createdBy", "task", "relatedApps", "createdAt", "updatedAt", "score"]);

function assertRecordShape(r) {
  for (const k of Object.keys(r)) assert.ok(sdkKeys.has(k), `unexpected field ${k} in ${JSON.stringify(r)}`);
  assert.equal(typeof r.path, "string");
  assert.ok(!Number.isNaN(Date.parse(r.createdAt)), `createdAt ${r.createdAt}`);
  assert.ok(!Number.isNaN(Date.parse(r.updatedAt)), `updatedAt ${r.updatedAt}`);
}

async function rejectsWith(promise, code, status) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof SemanticFsError, `want SemanticFsError, got ${err}`);
    assert.equal(err.code, code, err.message);
    if (status !== undefined) assert.equal(err.status, status);
    return true;
  });
}

test("the SDK's example app runs unchanged against the daemon", async (t) => {
  const d = await startDaemon(t);
  const { stdout, stderr } = await run(process.execPath, [exampleApp], {
    env: { ...process.env, BERTH_SEMANTIC_FS_SOCKET: d.socket, BERTH_CONTEXT_DATA: d.data },
  });
  assert.equal(stderr, "", "the app warned");
  const results = JSON.parse(stdout);
  assert.equal(results.length, 1, stdout);
  const [r] = results;
  assertRecordShape(r);
  assert.equal(r.path, "notes/auth/login-failure.md");
  assert.equal(r.task, "fix auth bug");
  assert.deepEqual(r.relatedApps, ["code-editor"]);
  assert.equal(fs.readFileSync(path.join(d.data, "notes/auth/login-failure.md"), "utf8"), "Users cannot log in after the 2.3 upgrade.\n");
});

test("register, tag and query return the SDK's shapes", async (t) => {
  const d = await startDaemon(t);
  fs.mkdirSync(path.join(d.data, "docs"));
  for (const n of ["a", "b", "c"]) fs.writeFileSync(path.join(d.data, "docs", `${n}.md`), n);
  const c = new SemanticFsClient({ socketPath: d.socket, root: d.data });
  const reg = await c.register({ app: "planner" });
  assert.equal(reg.app, "planner");
  assert.equal(reg.uid, process.getuid());

  // Relative, slash-led and absolute-under-root paths name the same file.
  const rec = await c.tag("docs/a.md", { task: "plan the launch", relatedApps: ["calendar", "mail"] });
  assertRecordShape(rec);
  assert.deepEqual([rec.path, rec.task, rec.relatedApps], ["docs/a.md", "plan the launch", ["calendar", "mail"]]);
  assert.equal((await c.tag("/docs/b.md", { task: "launch checklist" })).path, "docs/b.md");
  assert.equal((await c.tag(path.join(d.data, "docs", "c.md"), { task: "launch retro" })).path, "docs/c.md");

  // Untagged optional fields are left out, not sent as "" or [].
  const cleared = await c.tag("docs/c.md", {});
  assert.equal(cleared.task, undefined);
  assert.equal(cleared.relatedApps, undefined);

  const all = await c.query("launch");
  assert.deepEqual(all.map((r) => r.path).sort(), ["docs/a.md", "docs/b.md"]);
  all.forEach(assertRecordShape);
  assert.ok(all.every((r) => r.score > 0));
  assert.equal((await c.query("launch", 1)).length, 1);
  assert.deepEqual(await c.query("nothing-like-this"), []);
});

test("tag and query throw the daemon's error code when it refuses", async (t) => {
  const d = await startDaemon(t);
  fs.writeFileSync(path.join(d.data, "x.md"), "x");
  const c = new SemanticFsClient({ socketPath: d.socket });
  await rejectsWith(c.tag("missing.md", { task: "x" }), "not_found", 404);
  await rejectsWith(c.tag("../../etc/passwd", { task: "x" }), "invalid_path", 400);
  await rejectsWith(c.tag("x.md", { task: "x".repeat(5000) }), "invalid", 400);
  await rejectsWith(c.query("   "), "invalid", 400);
  await rejectsWith(c.query("x", -1), "invalid", 400);
  // register refuses too (a bad app name) but only warns.
  const warnings = [];
  t.mock.method(console, "warn", (...a) => warnings.push(a.join(" ")));
  assert.equal(await c.register({ app: "../bad" }), null);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /register/);
});

test("an outage is an error, never an empty answer; register warns and carries on", async (t) => {
  const dir = tempDir(t);
  const c = new SemanticFsClient({ socketPath: path.join(dir, "no-daemon.sock") });
  await rejectsWith(c.tag("a.md", { task: "x" }), "unreachable");
  await rejectsWith(c.query("anything"), "unreachable");
  const warnings = [];
  t.mock.method(console, "warn", (...a) => warnings.push(a.join(" ")));
  assert.equal(await c.register({ app: "notes" }), null);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /cannot reach the semfs daemon/);

  // A daemon that stopped, and one that died leaving its socket file behind.
  for (const how of ["stop", "kill"]) {
    const d = await startDaemon(t);
    fs.writeFileSync(path.join(d.data, "a.md"), "a");
    const live = new SemanticFsClient({ socketPath: d.socket });
    await live.tag("a.md", { task: "alpha" });
    assert.equal((await live.query("alpha")).length, 1);
    await d[how]();
    await rejectsWith(live.query("alpha"), "unreachable");
    await rejectsWith(live.tag("a.md", { task: "beta" }), "unreachable");
  }
});

test("BERTH_SEMANTIC_FS_SOCKET picks the socket", async (t) => {
  const d = await startDaemon(t);
  const old = process.env.BERTH_SEMANTIC_FS_SOCKET;
  process.env.BERTH_SEMANTIC_FS_SOCKET = d.socket;
  t.after(() => (old === undefined ? delete process.env.BERTH_SEMANTIC_FS_SOCKET : (process.env.BERTH_SEMANTIC_FS_SOCKET = old)));
  const c = new SemanticFsClient();
  assert.equal(c.socketPath, d.socket);
  assert.deepEqual(await c.query("anything"), []);
});

test("the embed hook's vectors rank files (all-MiniLM-L6-v2 reference vectors)", async (t) => {
  // Real MiniLM vectors of three subjects (embed/testdata/minilm_ref.json);
  // the daemon runs keyword-only, so any meaning comes from the hook.
  const ref = JSON.parse(fs.readFileSync(path.join(repoDir, "embed", "testdata", "minilm_ref.json"), "utf8"));
  const pick = [0, 1, 5, 6, 10, 11];
  const queryItem = ref.items[2];
  const d = await startDaemon(t);
  fs.mkdirSync(path.join(d.data, "docs"));
  for (const i of pick) fs.writeFileSync(path.join(d.data, "docs", `doc${String(i).padStart(2, "0")}.md`), ref.items[i].title);
  const asked = [];
  const embed = async (text) => {
    asked.push(text);
    const m = /\bdoc(\d\d)$/.exec(text);
    const item = m ? ref.items[Number(m[1])] : queryItem;
    return { model: ref.model, vector: item.vector };
  };
  const c = new SemanticFsClient({ socketPath: d.socket, embed });
  for (const i of pick) await c.tag(`docs/doc${String(i).padStart(2, "0")}.md`, { task: "reference item" });
  assert.equal(asked[0], tagText("reference item", [], "docs/doc00.md"));
  assert.equal(asked[0], "reference item. docs doc00");
  const res = await c.query("zzzzqqq");
  assert.equal(asked.at(-1), "zzzzqqq");
  assert.ok(res.length >= 2, JSON.stringify(res));
  // The query item is about deploying; its two deploy siblings come first.
  assert.deepEqual(res.slice(0, 2).map((r) => r.path).sort(), ["docs/doc00.md", "docs/doc01.md"]);

  // A failing hook is the app's error, typed, and nothing is sent.
  const broken = new SemanticFsClient({ socketPath: d.socket, embed: async () => { throw new Error("model not loaded"); } });
  await rejectsWith(broken.tag("docs/doc00.md", { task: "changed" }), "embed_failed");
  assert.equal((await c.query("reference")).find((r) => r.path === "docs/doc00.md")?.task, "reference item");
});

test("with the daemon's model, a query finds files by meaning", async (t) => {
  const modelDir = process.env.SEMFS_MODEL_DIR || path.join(repoDir, "embed", "model", "dist");
  if (!fs.existsSync(modelDir)) {
    if (process.env.SEMFS_REQUIRE_MODEL === "1") assert.fail(`no model at ${modelDir} (make model)`);
    t.skip(`no model at ${modelDir}: run \`make model\``);
    return;
  }
  const d = await startDaemon(t, { modelDir });
  fs.mkdirSync(path.join(d.data, "notes"));
  fs.writeFileSync(path.join(d.data, "notes", "login.md"), "x");
  fs.writeFileSync(path.join(d.data, "notes", "pizza.md"), "x");
  const c = new SemanticFsClient({ socketPath: d.socket });
  await c.tag("notes/login.md", { task: "fix login failure" });
  await c.tag("notes/pizza.md", { task: "order pizza for the team dinner" });
  const res = (await c.query("auth problems")).map((r) => r.path);
  assert.ok(res.includes("notes/login.md"), `auth problems -> ${res}`);
  assert.ok(!res.includes("notes/pizza.md") || res.indexOf("notes/pizza.md") > res.indexOf("notes/login.md"), `auth problems -> ${res}`);
});

test("grep finds lines by content, as the API answers them", async (t) => {
  const d = await startDaemon(t);
  fs.mkdirSync(path.join(d.data, "logs"));
  fs.writeFileSync(path.join(d.data, "logs", "a.log"), "ok\npayment webhook timed out\nok\n");
  fs.writeFileSync(path.join(d.data, "logs", "b.log"), "Payment WEBHOOK retried\n");
  fs.writeFileSync(path.join(d.data, "notes.md"), "nothing (here)\n");
  const c = new SemanticFsClient({ socketPath: d.socket, root: d.data });
  // Written on the host: grep finds them once the daemon's watcher has seen them.
  let r;
  for (const deadline = Date.now() + 20000; ; ) {
    r = await c.grep("payment webhook|nothing", { ignoreCase: true });
    if (r.files === 3 || Date.now() > deadline) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  r = await c.grep("payment webhook", { ignoreCase: true, context: 1 });
  assert.deepEqual(r.matches.map((m) => `${m.path}:${m.line}`), ["logs/a.log:2", "logs/b.log:1"]);
  assert.deepEqual(r.matches[0].before, ["ok"]);
  assert.deepEqual(r.matches[0].after, ["ok"]);
  assert.equal(r.files, 2);
  assert.equal(r.truncated, false);
  const fixed = await c.grep("(here)", { fixed: true, paths: [path.join(d.data, "notes.md")] });
  assert.deepEqual(fixed.matches.map((m) => [m.path, m.line, m.column]), [["notes.md", 1, 9]]);
  const limited = await c.grep("o", { limit: 1 });
  assert.equal(limited.matches.length, 1);
  assert.equal(limited.truncated, true);
  // counts: every file searched, none matching too (grep -c), whole past the limit.
  const counted = await c.grep("o", { counts: true, limit: 1 });
  assert.deepEqual(counted.counts, [
    { path: "logs/a.log", lines: 3 },
    { path: "logs/b.log", lines: 0 },
    { path: "notes.md", lines: 1 },
  ]);
  await rejectsWith(c.grep("a(b"), "invalid", 400);
});

test("changes() follows the feed in order, resumes from a cursor, reports a reset and ends on abort", async (t) => {
  const d = await startDaemon(t);
  const c = new SemanticFsClient({ socketPath: d.socket, root: d.data });
  await c.register({ app: "ts-app" });

  // A cursor of another history is a reset with the current cursor.
  const stale = c.changes({ since: "c1.1.0", pollMs: 1000 });
  const r = await stale.next();
  await stale.return();
  assert.equal(r.value.reset, true);
  const start = r.value.cursor;

  // A host process moves a finished file in (one change: a file written in
  // place may show as a create and a write, as the watcher sees them);
  // once the watcher took it in, the app tags it.
  const staged = path.join(path.dirname(d.data), "report.txt");
  fs.writeFileSync(staged, "numbers");
  fs.renameSync(staged, path.join(d.data, "report.txt"));
  const seen = [];
  for await (const e of c.changes({ since: start, pollMs: 20000 })) {
    seen.push(e);
    if (e.op === "create") await c.tag("report.txt", { task: "quarterly numbers" });
    if (e.op === "tag") break;
  }
  const ops = seen.map((e) => `${e.op} ${e.app} ${e.path}`);
  assert.deepEqual(ops, ["create host report.txt", "tag ts-app report.txt"]);
  assert.equal(seen[1].rev, seen[0].rev + 1, "revs grow by one");

  // Resuming from the tag's cursor waits for what comes next: a long poll
  // that a change ends, and an abort that ends the iteration quietly.
  const ac = new AbortController();
  const it = c.changes({ since: seen[1].cursor, signal: ac.signal, pollMs: 20000 });
  const next = it.next();
  fs.mkdirSync(path.join(d.data, "later"));
  fs.writeFileSync(path.join(d.data, "later", "b.txt"), "b");
  // A host mkdir is an event of its own, before the file made in it.
  const got = await next;
  assert.equal(`${got.value.op} ${got.value.app} ${got.value.path}`, "mkdir host later", JSON.stringify(got.value));
  const file = await it.next();
  assert.equal(`${file.value.op} ${file.value.app} ${file.value.path}`, "create host later/b.txt", JSON.stringify(file.value));
  assert.equal(file.value.rev, got.value.rev + 1, "revs grow by one");
  const parked = it.next();
  ac.abort();
  assert.equal((await parked).done, true);
});
