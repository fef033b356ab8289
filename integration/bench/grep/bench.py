#!/usr/bin/env python3
"""Grep benchmark (issue 25), driven by bench.sh: see its header for usage.

Steps, all against one real daemon serving the corpus as its backing directory
(tag index, model and content index on):

 1. Build, twice. (a) The first start: a fresh index directory; wait until
    the content index holds every corpus file with nothing pending, then read
    the daemon's CPU time (/proc/PID/stat utime+stime: the cost, not the
    machine's load) and resident memory. That CPU holds everything the daemon
    does at a first start: the tag index taking every file as a new record
    (Bleve, buntdb, the walk's durable-record reads), the content index, and
    the passage index's worker (reading, splitting, embedding) at its default
    budget, --passage-cpu of one core for as long as the build lasts. Stop it
    (a clean stop saves content.idx and passages.gob) and take the saved
    index's size. (b) The content index's own build, issue 25's "index build"
    (the trigram postings grep needs): content.idx removed, the daemon
    started again with its tag index current and the passage worker held to
    --passage-cpu 0.01 (passages have their own budget and progress in
    `semfs status`, and are not what grep waits for); its CPU until the
    content index holds every file again is the walk, the start-up reconcile
    of a current tag index, and the content index's build from the files.
    Then start it again on the saved index (default options) and read its
    resident memory once idle.
 2. Patterns, generated from the corpus with a seeded random generator (never
    hand-picked): selective literals (a word or two-word phrase of a random
    line of a random file; kept when rg finds it in 1 to 100 files) and
    regular expressions with a required literal (a word of a random line, then
    the next few characters of that line generalised to classes: letters to
    [A-Za-z]+, digits to [0-9]+, blanks to [ \\t]+; kept when rg finds it in 1
    to 1,000 files).
 3. Timing: ROUNDS rounds; in each, every pattern through POST /v1/grep (one
    new connection per request, the whole answer read) and rg over the backing
    directory, the tools' order alternating from round to round. Both print
    every matching line (no -q, no -l, output to a pipe).
 4. Check: for every timed pattern, the path:line set of /v1/grep equals rg's;
    any difference fails the run.
 5. GNU grep through a kernel NFS mount (NFS=auto, as root with QEMU and the
    packages of integration/kernel/setup.sh): the daemon runs in a network
    namespace of its own from the start; after the rounds above, guestgrep
    boots the QEMU guest of integration/kernel in that namespace (KVM where
    the CPU allows, else TCG: kernel.Accel), mounts the daemon's NFS export
    and runs GNU `grep -rlF` / `grep -rlE` there for the first NFS_PATTERNS
    patterns of each class, NFS_ROUNDS rounds, each pattern cold (after
    `echo 3 > /proc/sys/vm/drop_caches` in the guest) then warm. Under TCG a
    walk of the whole corpus takes many minutes per pattern, so NFS_DIR
    (default perl, 1,195 files, 21 MB) names the corpus directory it searches
    ("" = all of it), and beside it /v1/grep (paths: ["/NFS_DIR"]) and rg are
    timed on the same directory. Check: the files GNU grep lists, cold and
    warm, equal the files of /v1/grep's answer for that directory (an
    independent oracle through a real kernel client); any difference fails
    the run. GNU grep reads `[ \t]` inside brackets as three characters, so
    the regexes' `[ \t]+` is given to it as `[[:blank:]]+`.

It prints a Markdown table ready for BENCHMARKS.md on stdout; progress and
details on stderr.
"""
import http.client
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.environ["ROOT"]
DATA = os.environ["DATA"]
W = os.environ["W"]
BIN = os.environ["SEMFS_BIN"]
MODEL = os.environ.get("MODEL_DIR", "")
ROUNDS = int(os.environ.get("ROUNDS", "21"))
PATTERNS = int(os.environ.get("PATTERNS", "20"))
NFS_ROUNDS = int(os.environ.get("NFS_ROUNDS", "1"))
NFS_PATTERNS = int(os.environ.get("NFS_PATTERNS", "5"))
NFS_DIR = os.environ.get("NFS_DIR", "perl").strip("/")
NFS = os.environ.get("NFS", "auto")
NETNS = os.environ.get("NETNS", "")  # made by bench.sh when the GNU grep column can run
SEED = int(os.environ.get("SEED", "25"))
BUILD_ONLY = os.environ.get("BUILD_ONLY", "") == "1"  # the build steps and their table only
IDX = os.path.join(W, "index")
SOCK = os.path.join(W, "semfs.sock")
TICK = os.sysconf("SC_CLK_TCK")
ENV_C = dict(os.environ, LC_ALL="C.UTF-8")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path, timeout=600):
        super().__init__("semfs", timeout=timeout)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def call(method, path, body=None):
    """One request on a new connection; returns (status, raw body, seconds)."""
    c = UnixHTTP(SOCK)
    hdr = {"Content-Type": "application/json"} if body is not None else {}
    data = json.dumps(body).encode() if body is not None else None
    t0 = time.perf_counter()
    c.request(method, path, body=data, headers=hdr)
    r = c.getresponse()
    raw = r.read()
    t = time.perf_counter() - t0
    c.close()
    return r.status, raw, t


def health():
    try:
        st, raw, _ = call("GET", "/v1/health")
    except OSError:
        return None
    return json.loads(raw) if st == 200 else None


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK  # utime, stime (fields 14, 15)


def mem(pid, key):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith(key + ":"):
            return int(l.split()[1]) * 1024
    return 0


def start(build=False, extra=()):
    # SEMFS_CPUPROFILE (the daemon's CPU profile on exit) profiles the first
    # build only.
    env = dict(os.environ)
    if not build:
        env.pop("SEMFS_CPUPROFILE", None)
    args = (["ip", "netns", "exec", NETNS] if NETNS else []) + [BIN, "serve", "--data", DATA, "--index", IDX, "--socket", SOCK,
            "--9p", "off", "--nfs", "127.0.0.1:0", "--watch", "off", *extra]
    if MODEL:
        args += ["--model-dir", MODEL]
    out = open(os.path.join(W, "serve.out"), "a")
    err = open(os.path.join(W, "serve.log"), "a")
    p = subprocess.Popen(args, stdout=out, stderr=err, env=env, start_new_session=True)
    return p


def wait_built(p, want):
    """Until the content index holds want files with nothing pending."""
    last = 0
    while True:
        if p.poll() is not None:
            sys.exit(f"bench: the daemon exited ({p.returncode}); see {W}/serve.log")
        h = health()
        c = (h or {}).get("content") or {}
        if c.get("files", 0) >= want and c.get("pending", 1) == 0:
            return h
        if time.time() - last > 15:
            log(f"  indexing: {c.get('files', 0)}/{want} files, {c.get('pending')} pending, daemon CPU {cpu(p.pid):.0f} s")
            last = time.time()
        time.sleep(1)


def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=600)


def corpus_files():
    out = []
    for d, dirs, files in os.walk(DATA):
        dirs.sort()
        for f in sorted(files):
            out.append(os.path.relpath(os.path.join(d, f), DATA))
    return out


# ---- tools -----------------------------------------------------------------

def run_semfs(pat, fixed):
    st, raw, t = call("POST", "/v1/grep", {"pattern": pat, "fixed": fixed, "limit": 1000000})
    if st != 200:
        sys.exit(f"bench: /v1/grep {pat!r}: {st} {raw[:300]!r}")
    return raw, t


def run_semfs_paths(pat, fixed):
    st, raw, t = call("POST", "/v1/grep", {"pattern": pat, "fixed": fixed, "limit": 1000000, "paths": ["/" + NFS_DIR] if NFS_DIR else []})
    if st != 200:
        sys.exit(f"bench: /v1/grep {pat!r} on {NFS_DIR}: {st} {raw[:300]!r}")
    return raw, t


def semfs_set(raw):
    a = json.loads(raw)
    if a.get("truncated"):
        sys.exit("bench: /v1/grep answer truncated at 1,000,000 lines")
    return {(m["path"], m["line"]) for m in a["matches"]}, a.get("stats", {})


def run_proc(argv, cwd):
    t0 = time.perf_counter()
    r = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV_C)
    t = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        sys.exit(f"bench: {' '.join(argv)} exited {r.returncode}")
    return r.stdout, t


def rg_argv(pat, fixed, files=False):
    # -uu: no ignore files, hidden files too (the daemon answers every file);
    # -0: a NUL after the path, as paths may hold ':'.
    a = ["rg", "--no-config", "-uu", "--no-messages", "-0"]
    a += ["-l"] if files else ["-n", "--no-heading", "--with-filename"]
    return a + (["-F"] if fixed else []) + ["-e", pat]


def line_set(out, strip_dot=False):
    s = set()
    for rec in out.split(b"\n"):
        if not rec:
            continue
        path, rest = rec.split(b"\0", 1)
        path = path.decode("utf-8", "surrogateescape")
        if strip_dot and path.startswith("./"):
            path = path[2:]
        s.add((path, int(rest.split(b":", 1)[0])))
    return s


def rg_files(pat, fixed):
    out, _ = run_proc(rg_argv(pat, fixed, files=True), DATA)
    return out.count(b"\0")


# ---- patterns ----------------------------------------------------------------

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{5,30}")


def rand_line(rng, files):
    while True:
        p = os.path.join(DATA, rng.choice(files))
        try:
            lines = open(p, encoding="utf-8").read().split("\n")
        except (OSError, UnicodeDecodeError):
            continue
        lines = [l for l in lines if WORD.search(l) and len(l) < 400]
        if lines:
            return rng.choice(lines)


def generalise(s):
    out = []
    for m in re.finditer(r"[A-Za-z]+|[0-9]+|[ \t]+|.", s):
        t = m.group(0)
        if t[0].isascii() and t[0].isalpha():
            out.append("[A-Za-z]+")
        elif t[0].isdigit():
            out.append("[0-9]+")
        elif t[0] in " \t":
            out.append("[ \\t]+")
        else:
            out.append(re.escape(t))
    return "".join(out)


def literal(rng, files):
    l = rand_line(rng, files)
    ws = list(WORD.finditer(l))
    i = rng.randrange(len(ws))
    if rng.random() < 0.3 and i + 1 < len(ws):  # a two-word phrase, as in the line
        return l[ws[i].start():ws[i + 1].end()]
    return ws[i].group(0)


def regex(rng, files):
    l = rand_line(rng, files)
    ws = list(WORD.finditer(l))
    w = rng.choice(ws)
    tail = l[w.end():w.end() + rng.randrange(4, 16)]
    toks = re.findall(r"[A-Za-z]+|[0-9]+|[ \t]+|.", tail)[:3]
    if not toks:
        return None
    return re.escape(w.group(0)) + generalise("".join(toks))


def choose(rng, files, gen, fixed, lo, hi, n, seen):
    got, tries = [], 0
    while len(got) < n and tries < 30 * n:
        tries += 1
        p = gen(rng, files)
        if not p or p in seen or p.strip() != p or "\\" in p and fixed:
            continue
        seen.add(p)
        k = rg_files(p, fixed)
        if lo <= k <= hi:
            got.append((p, k))
    log(f"  {len(got)} patterns kept of {tries} drawn ({'literal' if fixed else 'regex'}, {lo}..{hi} files)")
    return got


# ---- GNU grep through a kernel NFS mount, in a QEMU guest ---------------------

def nfs_why():
    """Why the GNU grep column cannot run here, or None."""
    if NFS == "0":
        return "off (NFS=0)"
    if not NETNS:
        return "needs root, ip and qemu-system-x86_64 (bench.sh makes the network namespace)"
    return None


class Guest:
    """guestgrep (integration/bench/grep/guestgrep): a booted guest with the
    daemon's export mounted over NFS."""

    def __init__(self, port):
        self.log = open(os.path.join(W, "guestgrep.log"), "a")
        self.p = subprocess.Popen([os.path.join(W, "guestgrep"), "-netns", NETNS, "-nfs-port", str(port),
                                   "-guest", os.path.join(W, "semfs-guest"), "-dir", os.path.join(W, "vm")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.info = self.answer()
        if not self.info.get("ready"):
            sys.exit(f"bench: guestgrep: {self.info}")

    def answer(self):
        l = self.p.stdout.readline()
        if not l:
            self.log.flush()
            tail = open(os.path.join(W, "guestgrep.log")).read()[-3000:]
            sys.exit(f"bench: guestgrep exited ({self.p.wait()}):\n{tail}")
        return json.loads(l)

    def grep(self, pat, fixed, cold):
        self.p.stdin.write(json.dumps({"pattern": gnu_pattern(pat, fixed), "fixed": fixed, "cold": cold, "dir": NFS_DIR}) + "\n")
        self.p.stdin.flush()
        a = self.answer()
        if "error" in a or a["status"] not in (0, 1):
            sys.exit(f"bench: GNU grep in the guest on {pat!r}: {a}")
        return a

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=120)


def gnu_pattern(pat, fixed):
    # POSIX brackets take a backslash literally: [ \t] is space, '\' and 't'.
    return pat if fixed else pat.replace("[ \\t]+", "[[:blank:]]+")


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs) + 0.5) - 1 if q * len(xs) >= 1 else 0)]


def ms(x):
    return f"{x * 1000:.1f}" if x < 10 else f"{x * 1000:.0f}"


def report_build(files, nbytes, c, cpus, wall, ccpu, cwall, size, hwm, rss, rss2, gb):
    """The report's heading and build table (stdout)."""
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    load = open("/proc/loadavg").read().split()[:3]
    cmd = ("BUILD_ONLY=1" if BUILD_ONLY else f"ROUNDS={ROUNDS} PATTERNS={PATTERNS} NFS_ROUNDS={NFS_ROUNDS} NFS_PATTERNS={NFS_PATTERNS} NFS_DIR={NFS_DIR} SEED={SEED}") + " bash integration/bench/grep/bench.sh CORPUS"
    print(f"Commit `{commit}{'+dirty' if dirty else ''}`, {os.cpu_count()} cores, load average {' '.join(load)} at the end; "
          f"`{cmd}` (corpus by `integration/bench/grep/corpus.sh`: {len(files)} files, {nbytes / 1e6:.0f} MB).")
    print()
    print("| build | value |")
    print("|---|---|")
    print(f"| text indexed | {c['files']} files, {c['bytes'] / 1e6:.0f} MB (skipped: {', '.join(f'{k} {v}' for k, v in c['skipped'].items())}) |")
    print(f"| the content index (what grep needs), rebuilt in the daemon: daemon CPU (utime+stime) until nothing pending, tag index current, passages at 1 % of a core | {ccpu:.1f} s = **{c['bytes'] / 1e6 / ccpu:.1f} MB of text per CPU-second** (wall {cwall:.0f} s) |")
    print(f"| the first start (fresh index directory: tag index of every file, content index, passages at their default budget): daemon CPU until the content index has nothing pending | {cpus:.1f} s = {c['bytes'] / 1e6 / cpus:.1f} MB of text per CPU-second (wall {wall:.0f} s) |")
    print(f"| content.idx on disk | {size / 1e6:.1f} MB = **{size / c['bytes']:.3f}× the indexed bytes** |")
    print(f"| resident memory | peak {hwm / 1e6:.0f} MB = {hwm / 1e6 / gb:.0f} MB per GB indexed; after the build {rss / 1e6:.0f} MB; "
          f"restarted on the saved index {rss2 / 1e6:.0f} MB = **{rss2 / 1e6 / gb:.0f} MB per GB indexed** |")


def main():
    files = corpus_files()
    nbytes = sum(os.path.getsize(os.path.join(DATA, f)) for f in files)
    log(f"corpus {DATA}: {len(files)} files, {nbytes / 1e6:.0f} MB")

    # 1. build
    log("build: starting the daemon on a fresh index")
    t0 = time.time()
    p = start(build=True)
    h = wait_built(p, len(files))
    wall = time.time() - t0
    c = h["content"]
    cpus = cpu(p.pid)
    hwm, rss = mem(p.pid, "VmHWM"), mem(p.pid, "VmRSS")
    gb = c["bytes"] / 1e9
    log(f"  built: {c['files']} files, {c['bytes'] / 1e6:.0f} MB of text in {wall:.0f} s wall, {cpus:.1f} s daemon CPU; skipped {c['skipped']}")
    ps = h.get("passages") or {}
    log(f"  passages then: {ps.get('files')} files, {ps.get('pending')} pending")
    stop(p)
    size = os.path.getsize(os.path.join(IDX, "content.idx"))
    log("build: the content index alone (content.idx removed; tag index current; passages at 1 % of a core)")
    os.remove(os.path.join(IDX, "content.idx"))
    t0 = time.time()
    p = start(extra=("--passage-cpu", "0.01"))
    h = wait_built(p, len(files))
    cwall = time.time() - t0
    ccpu = cpu(p.pid)
    log(f"  built: {h['content']['files']} files in {cwall:.0f} s wall, {ccpu:.1f} s daemon CPU")
    stop(p)
    t0 = time.time()
    p = start()
    h = wait_built(p, len(files))
    time.sleep(2)
    rss2 = mem(p.pid, "VmRSS")
    restart_cpu = cpu(p.pid)
    log(f"  restart on the saved index: {time.time() - t0:.1f} s wall, {restart_cpu:.1f} s CPU, resident {rss2 / 1e6:.0f} MB")
    if BUILD_ONLY:
        stop(p)
        report_build(files, nbytes, c, cpus, wall, ccpu, cwall, size, hwm, rss, rss2, gb)
        return

    try:
        # 2. patterns
        rng = random.Random(SEED)
        seen = set()
        log(f"patterns: {PATTERNS} per class, seed {SEED}")
        classes = [
            ("selective literal", True, choose(rng, files, literal, True, 1, 100, PATTERNS, seen)),
            ("regex with a required literal", False, choose(rng, files, regex, False, 1, 1000, PATTERNS, seen)),
        ]
        why = nfs_why()
        if why:
            log(f"GNU grep through a kernel NFS mount: not run: {why}")
        # 3. timing, 4. check
        times = {}
        stats = {}
        bad = []
        for r in range(ROUNDS):
            tools = ["semfs", "rg"]
            if r % 2:
                tools.reverse()
            for cls, fixed, pats in classes:
                for pat, _ in pats:
                    outs = {}
                    for tool in tools:
                        if tool == "semfs":
                            out, t = run_semfs(pat, fixed)
                        else:
                            out, t = run_proc(rg_argv(pat, fixed), DATA)
                        times.setdefault((cls, tool), []).append(t)
                        if tool == "semfs":  # the daemon's own time (stats.ms), outside the client
                            times.setdefault((cls, "server"), []).append(json.loads(out)["stats"]["ms"] / 1000)
                        outs[tool] = out
                    if r == 0:  # the check: every timed pattern, every tool
                        want = line_set(outs["rg"])
                        got, st = semfs_set(outs["semfs"])
                        stats[pat] = (st, len(want))
                        if got != want:
                            bad.append((pat, "semfs", len(got - want), len(want - got)))
            if r % 5 == 4 or r == ROUNDS - 1:
                log(f"  round {r + 1}/{ROUNDS}")
        # 5. GNU grep in the guest, on NFS_DIR, beside /v1/grep and rg on it
        nfs = {}
        if not why:
            port = (health() or {}).get("listeners", {}).get("nfs", "").rsplit(":", 1)[-1]
            log(f"GNU grep through a kernel NFS mount: booting the guest (daemon's NFS port {port})")
            g = Guest(port)
            nfs["info"] = g.info
            log(f"  guest ready in {g.info['bootSeconds']:.0f} s ({g.info['accel']}); {g.info['mount']}")
            sub = os.path.join(DATA, NFS_DIR)
            nfs["files"] = sum(len(f) for _, _, f in os.walk(sub))
            nfs["bytes"] = sum(os.path.getsize(os.path.join(d, x)) for d, _, fs in os.walk(sub) for x in fs)
            # Per class, the first NFS_PATTERNS patterns with a match in
            # NFS_DIR, then the first without (the patterns are drawn from
            # the whole corpus): the check then compares non-empty answers.
            sel = {}
            for cls, fixed, pats in classes:
                hit = [q for q, _ in pats if json.loads(run_semfs_paths(q, fixed)[0])["files"] > 0]
                sel[cls] = (hit + [q for q, _ in pats if q not in hit])[:NFS_PATTERNS]
                nfs[cls] = len([q for q in sel[cls] if q in hit])
            g.grep("semfs warm-up, not timed", True, False)  # the guest's and the daemon's first walk of NFS_DIR
            try:
                for r in range(NFS_ROUNDS):
                    for cls, fixed, pats in classes:
                        for pat in sel[cls]:
                            raw, t = run_semfs_paths(pat, fixed)
                            times.setdefault((cls, "semfs-sub"), []).append(t)
                            _, t2 = run_proc(rg_argv(pat, fixed), sub)
                            times.setdefault((cls, "rg-sub"), []).append(t2)
                            want = sorted({m["path"][len(NFS_DIR) + 1:] if NFS_DIR else m["path"] for m in json.loads(raw)["matches"]})
                            for cold in (True, False):
                                a = g.grep(pat, fixed, cold)
                                tool = "nfs-cold" if cold else "nfs-warm"
                                times.setdefault((cls, tool), []).append(a["seconds"])
                                if a["files"] != want:
                                    bad.append((pat, f"GNU grep in the guest ({tool})", len(set(a["files"]) - set(want)), len(set(want) - set(a["files"]))))
                                log(f"  {tool}: {a['seconds']:.1f} s, {len(a['files'])} files (/v1/grep: {len(want)}): {pat!r}")
            finally:
                g.close()
    finally:
        stop(p)

    for cls, fixed, pats in classes:
        for pat, k in pats:
            st, lines = stats[pat]
            log(f"  {cls[:7]} {k:4d} files {lines:6d} lines, candidates {st.get('candidates')}, server {st.get('ms')} ms: {pat!r}")

    # the report
    report_build(files, nbytes, c, cpus, wall, ccpu, cwall, size, hwm, rss, rss2, gb)
    print()
    print("| pattern class (generated) | patterns | files matched, median (max) | `/v1/grep` p50 / p90 ms | its `stats.ms` p50 / p90 | `rg` p50 / p90 ms | answers equal rg's path:line |")
    print("|---|---|---|---|---|---|---|")
    for cls, fixed, pats in classes:
        ks = [k for _, k in pats]
        row = [cls, str(len(pats)), f"{statistics.median(ks):.0f} ({max(ks)})"]
        for tool in ("semfs", "server", "rg"):
            xs = times.get((cls, tool))
            row.append(f"{ms(pct(xs, .5))} / {ms(pct(xs, .9))}" if xs else "n/a")
        nb = sum(1 for b in bad if b[0] in {q for q, _ in pats} and b[1] == "semfs")
        row.append("yes" if nb == 0 else f"**no: {nb} patterns differ**")
        print("| " + " | ".join(row) + " |")
    print()
    print(f"Timings pool every pattern of a class × {ROUNDS} rounds; "
          "each tool prints every matching line into a pipe; `/v1/grep` is one request on a new control-socket connection, answer read whole.")
    print()
    if why:
        print(f"GNU grep through a kernel NFS mount: not run: {why}.")
    else:
        i = nfs["info"]
        print(f"GNU `grep` {i['grep']} through the NFSv3 client of {i['kernel']} in a QEMU guest ({i['accel']}, 1 vCPU, {i['memMB']} MiB), "
              f"on `{NFS_DIR or '.'}` ({nfs['files']} files, {nfs['bytes'] / 1e6:.0f} MB), {NFS_PATTERNS} patterns of each class (those with a match there first) × {NFS_ROUNDS} rounds, "
              "each cold (guest caches dropped) then warm, after one untimed walk; "
              f"`/v1/grep` (`paths: [\"/{NFS_DIR}\"]`) and `rg` on the same directory beside it. `{i['mount']}`.")
        print()
        print(f"| pattern class, on `{NFS_DIR or '.'}` | patterns | `/v1/grep` p50 / p90 ms | `rg` p50 / p90 ms | GNU `grep -rl` in the guest, cold, p50 / p90 ms | warm, p50 / p90 ms | GNU grep's files equal /v1/grep's |")
        print("|---|---|---|---|---|---|---|")
        for cls, fixed, pats in classes:
            row = [cls, f"{len(pats[:NFS_PATTERNS])} ({nfs[cls]} with a match there)"]
            for tool in ("semfs-sub", "rg-sub", "nfs-cold", "nfs-warm"):
                xs = times.get((cls, tool))
                row.append(f"{ms(pct(xs, .5))} / {ms(pct(xs, .9))}" if xs else "n/a")
            nb = len({b[0] for b in bad if b[0] in {q for q, _ in pats} and b[1] != "semfs"})
            row.append(f"yes, all {len(pats[:NFS_PATTERNS])} (cold and warm)" if nb == 0 else f"**no: {nb} patterns differ**")
            print("| " + " | ".join(row) + " |")
    if bad:
        for b in bad:
            log(f"MISMATCH {b[1]} on {b[0]!r}: {b[2]} extra, {b[3]} missing")
        sys.exit(1)


main()
