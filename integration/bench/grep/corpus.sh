#!/bin/bash
# Builds the grep benchmark's corpus (issue 25) from text a Debian machine
# with Go already holds: the Go module cache, Go's own source tree, the man
# pages (decompressed), /usr/share/doc (its .gz decompressed), /usr/include,
# the Perl and Python libraries. Only text files that the content index
# accepts are kept: regular files (no symlinks), at most MAX bytes (default
# 16 MiB, the daemon's --content-max), no NUL byte, valid UTF-8, not empty.
#
#   bash integration/bench/grep/corpus.sh DIR
#
# DIR must not exist or be empty, and must be outside the clone: the corpus is
# never committed. The result is deterministic for a given machine: sources
# and files are walked in byte order, and each file's mtime is its source's.
# It prints the file count, the bytes and a digest of the sorted path:size
# list (the same digest means the same corpus), and fails unless it reaches
# MINFILES (default 50000) files and MINBYTES (default 500000000) bytes.
set -eu
DEST=${1:?usage: corpus.sh DIR}
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
case "$DEST/" in "$ROOT"/*) echo "corpus.sh: $DEST is inside the clone $ROOT; pick a directory outside it" >&2; exit 2 ;; esac
[ -z "$(ls -A "$DEST")" ] || { echo "corpus.sh: $DEST is not empty" >&2; exit 2; }

# label=source pairs; the label is the corpus's top directory for that source.
SOURCES=(
  "gomod=$(go env GOMODCACHE)"
  "goroot=$(go env GOROOT)/src"
  "man=/usr/share/man"
  "doc=/usr/share/doc"
  "include=/usr/include"
  "perl=/usr/share/perl"
  "perl5=/usr/share/perl5"
  "python=$(ls -d /usr/lib/python3.[0-9]* 2>/dev/null | sort -V | tail -1)"
)
exec python3 - "$DEST" "${MAX:-16777216}" "${MINFILES:-50000}" "${MINBYTES:-500000000}" "${SOURCES[@]}" <<'PY'
import gzip, hashlib, os, stat, sys

dest, cap, minfiles, minbytes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# The module cache's download cache holds zips and checksums, not source.
skip_dirs = {"cache", ".git", "__pycache__"}

def text(b):
    if not b or len(b) > cap or b"\0" in b:
        return None
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return b

def walk(top):
    """Regular files under top, in byte order of their relative paths."""
    out = []
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if x not in skip_dirs and not os.path.islink(os.path.join(d, x)))
        for f in files:
            p = os.path.join(d, f)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append((os.path.relpath(p, top), st))
    out.sort(key=lambda x: os.fsencode(x[0]))
    return out

n = size = 0
digest = hashlib.sha256()
per = []
for pair in sys.argv[5:]:
    label, top = pair.split("=", 1)
    if not top or not os.path.isdir(top):
        print(f"corpus: {label}: {top or '(none)'} missing, skipped", file=sys.stderr)
        continue
    ln = lb = 0
    for rel, st in walk(top):
        src = os.path.join(top, rel)
        try:
            with open(src, "rb") as f:
                b = f.read(cap + 1)
            if rel.endswith(".gz") and label in ("man", "doc"):
                b = gzip.decompress(b)
                rel = rel[:-3]
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        b = text(b)
        if b is None:
            continue
        out = os.path.join(dest, label, rel)
        if os.path.exists(out):  # foo and foo.gz side by side: keep the first
            continue
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            f.write(b)
        os.utime(out, ns=(st.st_mtime_ns, st.st_mtime_ns))
        name = f"{label}/{rel}"
        digest.update(f"{name}:{len(b)}\n".encode("utf-8", "surrogateescape"))
        ln += 1
        lb += len(b)
    per.append(f"{label} {ln} files {lb/1e6:.0f} MB")
    n += ln
    size += lb
print("corpus: " + ", ".join(per), file=sys.stderr)
print(f"corpus: {n} files, {size} bytes, digest {digest.hexdigest()[:16]} in {dest}")
if n < minfiles or size < minbytes:
    print(f"corpus: too small (want >= {minfiles} files and >= {minbytes} bytes)", file=sys.stderr)
    sys.exit(1)
PY
