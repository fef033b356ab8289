// Test helper: runs the real `semfs serve` (SEMFS_BIN, built by the Go test that
// runs these tests, or bin/semfs) on temporary directories, control socket only.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export function semfsBin() {
  const bin = process.env.SEMFS_BIN || path.join(repoDir, "bin", "semfs");
  if (!fs.existsSync(bin)) throw new Error(`no semfs binary at ${bin}: run \`make build\` or set SEMFS_BIN`);
  return bin;
}

export function tempDir(t, prefix = "semfs-ts-") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Starts a daemon and resolves once it listens (it prints its index line).
 * modelDir: "off" (keyword-only, the default) or a model directory.
 * Stopped with SIGTERM when the test ends.
 */
export async function startDaemon(t, { modelDir = "off" } = {}) {
  // Not tempDir(t): the daemon must stop before its directories go.
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "semfs-ts-"));
  const d = {
    data: path.join(base, "data"),
    index: path.join(base, "index"),
    socket: path.join(base, "semfs.sock"),
    log: "",
  };
  fs.mkdirSync(d.data);
  const child = spawn(semfsBin(), ["serve", "--data", d.data, "--index", d.index, "--socket", d.socket,
    "--nfs", "off", "--9p", "off", "--model-dir", modelDir, "--write-quiet", "200ms"], { stdio: ["ignore", "pipe", "pipe"] });
  d.child = child;
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  child.stderr.on("data", (b) => (d.log += b));
  await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`semfs did not start in 120 s\n${d.log}`)), 120000);
    child.stdout.on("data", (b) => {
      out += b;
      d.log += b;
      if (/^\s*index\s/m.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`semfs exited (${code}) before it was ready\n${d.log}`));
    });
  });
  let stopped = false;
  d.stop = async () => {
    if (stopped) return;
    stopped = true;
    child.kill("SIGTERM");
    const { code } = await exited;
    if (code !== 0) throw new Error(`semfs exited with ${code} after SIGTERM\n${d.log}`);
  };
  d.kill = async () => {
    stopped = true;
    child.kill("SIGKILL");
    await exited;
  };
  t.after(async () => {
    try {
      await d.stop();
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
  return d;
}
