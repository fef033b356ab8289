// The tarball `npm pack` makes installs into a fresh app, offline (the package
// has no dependencies), and the SDK's example app works from there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startDaemon, tempDir } from "./daemon.mjs";

const run = promisify(execFile);
const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

test("npm pack's tarball installs offline into a fresh app and works there", async (t) => {
  const work = tempDir(t, "semfs-pack-");
  // A private npm cache: nothing read from or written to the developer's.
  const env = { ...process.env, npm_config_cache: path.join(work, "npm-cache"), npm_config_update_notifier: "false" };
  const { stdout } = await run(npm, ["pack", "--json", "--pack-destination", work], { cwd: pkgDir, env });
  const [info] = JSON.parse(stdout);
  const files = info.files.map((f) => f.path).sort();
  assert.deepEqual(files, ["README.md", "index.d.ts", "index.js", "package.json"]);
  const tgz = path.join(work, info.filename);

  const app = path.join(work, "app");
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "fresh-app", version: "1.0.0", private: true, type: "module" }));
  await run(npm, ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", tgz], { cwd: app, env });
  const installed = JSON.parse(fs.readFileSync(path.join(app, "node_modules", "@semfs", "client", "package.json"), "utf8"));
  assert.equal(installed.name, "@semfs/client");
  assert.deepEqual(installed.dependencies ?? {}, {});
  fs.copyFileSync(path.join(pkgDir, "test", "example", "app.mjs"), path.join(app, "app.mjs"));

  const d = await startDaemon(t);
  const res = await run(process.execPath, ["app.mjs"], {
    cwd: app,
    env: { ...process.env, BERTH_SEMANTIC_FS_SOCKET: d.socket, BERTH_CONTEXT_DATA: d.data },
  });
  const results = JSON.parse(res.stdout);
  assert.equal(results.length, 1, res.stdout);
  assert.equal(results[0].path, "notes/auth/login-failure.md");
  assert.equal(results[0].task, "fix auth bug");
});
