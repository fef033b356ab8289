/* nfsload: single-stream NFSv3 load on libnfs's synchronous API, one call in
 * flight at a time (the way one process's I/O reaches a server through a kernel
 * mount), for bench.sh and ab.sh. Every server in a run gets the same calls:
 *
 *   nfsload URL write NAME MIB     create NAME, MIB x 1 MiB WRITE, close (COMMIT)
 *   nfsload URL read NAME          1 MiB READs to the end of NAME
 *   nfsload URL create DIR N       mkdir DIR; N x (CREATE DIR/fNNNNN, WRITE 4 KiB, close)
 *   nfsload URL list DIR           READDIRPLUS through DIR, count the entries
 *   nfsload URL stat NAME N        N x GETATTR of NAME's handle, then N x stat by path
 *   nfsload URL fstat NAME N       N x GETATTR of NAME's handle only (ab.sh: server CPU per GETATTR)
 *
 * URL names the export, e.g. nfs://127.0.0.1/@bench?nfsport=P&mountport=P&version=3.
 * libnfs's close of a written file sends the COMMIT, so "write" and "create"
 * include the server's fsync as a kernel client's close-to-open does. Output
 * lines (bench.sh parses them):
 *
 *   wrote MIB MiB in S s (wsize W)
 *   read BYTES bytes in S s (rsize R)
 *   created N files in S s
 *   listed N entries in S s
 *   fstat(GETATTR) n=N median_us=.. p90_us=.. p99_us=.. min_us=..
 *   stat(path) n=N median_us=.. ...
 *
 * Every run stops at a 60 s deadline (exit 3). Written for semfs's
 * integration/bench; build with gcc -O2 -o nfsload nfsload.c -lnfs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nfsc/libnfs.h>

#define MIB (1 << 20)
#define DEADLINE_S 60.0

static struct nfs_context *nfs;
static double start;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fail(const char *what) {
    fprintf(stderr, "nfsload: %s: %s\n", what, nfs ? nfs_get_error(nfs) : "out of memory");
    exit(1);
}

static void deadline(const char *op, long at) {
    if (now() - start > DEADLINE_S) {
        fprintf(stderr, "nfsload: %s: deadline reached after %ld\n", op, at);
        exit(3);
    }
}

static char *pathf(const char *fmt, const char *a, int i) {
    static char p[4096];
    snprintf(p, sizeof p, fmt, a, i);
    return p;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* latencies prints the distribution of n call times, in microseconds. */
static void latencies(const char *label, double *t, int n) {
    if (n == 0) {
        printf("%s n=0\n", label);
        return;
    }
    qsort(t, n, sizeof *t, by_value);
    printf("%s n=%d median_us=%.1f p90_us=%.1f p99_us=%.1f min_us=%.1f\n", label, n,
           t[n / 2] * 1e6, t[n * 9 / 10] * 1e6, t[n * 99 / 100] * 1e6, t[0] * 1e6);
}

static void do_write(const char *name, long mib) {
    char *buf = malloc(MIB);
    if (!buf) fail("malloc");
    for (int i = 0; i < MIB; i++) buf[i] = (char)(i * 131 + 7);
    struct nfsfh *fh;
    if (nfs_create(nfs, pathf("/%s", name, 0), O_WRONLY | O_TRUNC, 0644, &fh) != 0) fail("create");
    for (long i = 0; i < mib; i++) {
        if (nfs_pwrite(nfs, fh, (uint64_t)i * MIB, MIB, buf) != MIB) fail("write");
        deadline("write", i);
    }
    if (nfs_close(nfs, fh) != 0) fail("close");
    printf("wrote %ld MiB in %.3f s (wsize %llu)\n", mib, now() - start,
           (unsigned long long)nfs_get_writemax(nfs));
}

static void do_read(const char *name) {
    char *buf = malloc(MIB);
    if (!buf) fail("malloc");
    struct nfsfh *fh;
    if (nfs_open(nfs, pathf("/%s", name, 0), O_RDONLY, &fh) != 0) fail("open");
    uint64_t off = 0;
    for (;;) {
        int n = nfs_pread(nfs, fh, off, MIB, buf);
        if (n < 0) fail("read");
        if (n == 0) break;
        off += n;
        deadline("read", (long)(off / MIB));
    }
    nfs_close(nfs, fh);
    printf("read %llu bytes in %.3f s (rsize %llu)\n", (unsigned long long)off, now() - start,
           (unsigned long long)nfs_get_readmax(nfs));
}

static void do_create(const char *dir, int n) {
    char data[4096];
    memset(data, 'x', sizeof data);
    if (nfs_mkdir(nfs, pathf("/%s", dir, 0)) != 0) fail("mkdir");
    int i = 0;
    for (; i < n; i++) {
        struct nfsfh *fh;
        if (nfs_create(nfs, pathf("/%s/f%05d", dir, i), O_WRONLY | O_EXCL, 0644, &fh) != 0) fail("create");
        if (nfs_pwrite(nfs, fh, 0, sizeof data, data) != (int)sizeof data) fail("write");
        if (nfs_close(nfs, fh) != 0) fail("close");
        deadline("create", i);
    }
    printf("created %d files in %.3f s\n", i, now() - start);
}

static void do_list(const char *dir) {
    struct nfsdir *d;
    if (nfs_opendir(nfs, pathf("/%s", dir, 0), &d) != 0) fail("opendir");
    int n = 0;
    while (nfs_readdir(nfs, d) != NULL) n++;
    nfs_closedir(nfs, d);
    printf("listed %d entries in %.3f s\n", n, now() - start);
}

static void do_stat(const char *name, int n, int bypath) {
    double *t = calloc(n > 0 ? n : 1, sizeof *t);
    if (!t) fail("calloc");
    char path[4096];
    snprintf(path, sizeof path, "/%s", name);
    struct nfsfh *fh;
    struct nfs_stat_64 st;
    if (nfs_open(nfs, path, O_RDONLY, &fh) != 0) fail("open");
    int i = 0;
    for (; i < n && now() - start < DEADLINE_S / 2; i++) {
        double a = now();
        if (nfs_fstat64(nfs, fh, &st) != 0) fail("fstat");
        t[i] = now() - a;
    }
    latencies("fstat(GETATTR)", t, i);
    for (i = 0; bypath && i < n && now() - start < DEADLINE_S; i++) {
        double a = now();
        if (nfs_stat64(nfs, path, &st) != 0) fail("stat");
        t[i] = now() - a;
    }
    if (bypath) latencies("stat(path)", t, i);
    nfs_close(nfs, fh);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: nfsload URL write NAME MIB | read NAME | create DIR N | list DIR | stat NAME N | fstat NAME N\n");
        return 2;
    }
    start = now();
    if (!(nfs = nfs_init_context())) fail("init");
    struct nfs_url *url = nfs_parse_url_dir(nfs, argv[1]);
    if (!url) fail("url");
    if (nfs_mount(nfs, url->server, url->path) != 0) fail("mount");
    const char *op = argv[2], *name = argv[3];
    long arg = argc > 4 ? atol(argv[4]) : -1;
    if (!strcmp(op, "write") && arg >= 0) do_write(name, arg);
    else if (!strcmp(op, "read")) do_read(name);
    else if (!strcmp(op, "create") && arg >= 0) do_create(name, (int)arg);
    else if (!strcmp(op, "list")) do_list(name);
    else if (!strcmp(op, "stat") && arg >= 0) do_stat(name, (int)arg, 1);
    else if (!strcmp(op, "fstat") && arg >= 0) do_stat(name, (int)arg, 0);
    else {
        fprintf(stderr, "nfsload: unknown operation or missing argument: %s\n", op);
        return 2;
    }
    nfs_umount(nfs);
    nfs_destroy_url(url);
    nfs_destroy_context(nfs);
    return 0;
}
