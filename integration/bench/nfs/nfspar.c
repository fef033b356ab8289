/* nfspar: parallel NFSv3 load on ONE connection, with libnfs's async API.
 *
 *   nfspar URL DIR [MIB] [CREATES] [STATS]
 *
 * Eight streams share one nfs_context (one TCP connection), each with one call
 * in flight at a time, the way eight processes doing ordinary I/O share one
 * kernel mount: stream i%4 == 0 reads DIR/rI (MIB MiB, 1 MiB READs), 1 writes
 * DIR/wI (MIB MiB, 1 MiB WRITEs, then COMMIT), 2 creates CREATES files of
 * 4 KiB (CREATE, WRITE, close), 3 stats DIR/r0 STATS times. Setup (mkdir,
 * writing the files the readers read) is not timed. Output, one line:
 *
 *   par streams=8 secs=S read_s=.. write_s=.. create_s=.. stat_s=.. (finish times)
 *
 * Defaults: MIB 32, CREATES 500, STATS 4000. Every run is bounded by a
 * 120 s deadline. Written for semfs's integration/bench; build with
 * gcc -O2 -o nfspar nfspar.c -lnfs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nfsc/libnfs.h>

#define STREAMS 8
#define CHUNK (1 << 20)
#define DEADLINE_S 120.0

enum kind { READ, WRITE, CREATE, STAT };
static const char *kname[] = {"read", "write", "create", "stat"};

struct stream {
    int id;
    enum kind kind;
    int step;       /* which call of the stream's job is in flight */
    long done;      /* bytes (read/write) or operations (create/stat) done */
    long goal;
    struct nfsfh *fh;
    double finished; /* seconds since start, 0 while running */
};

static struct nfs_context *nfs;
static const char *dir;
static char *chunk;
static double t0;
static int running;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *msg) {
    fprintf(stderr, "nfspar: %s: %s\n", what, msg ? msg : nfs_get_error(nfs));
    exit(1);
}

static void next(struct stream *s);

static void finish(struct stream *s) {
    s->finished = now() - t0;
    running--;
}

/* cb is every call's callback: status < 0 is an error whose text is data. */
static void cb(int status, struct nfs_context *n, void *data, void *priv) {
    struct stream *s = priv;
    (void)n;
    if (status < 0) die(kname[s->kind], (const char *)data);
    switch (s->kind) {
    case READ:
        if (s->step == 0) s->fh = data;
        else if (s->fh && s->done < s->goal) {
            if (status == 0) die("read", "short file");
            s->done += status;
        }
        break;
    case WRITE:
        if (s->step == 0) s->fh = data;
        else if (s->fh && s->done < s->goal) s->done += status;
        break;
    case CREATE:
        /* steps cycle: 0 creat, 1 write 4 KiB, 2 close */
        if (s->step % 3 == 0) s->fh = data;
        if (s->step % 3 == 2) s->done++;
        break;
    case STAT:
        s->done++;
        break;
    }
    s->step++;
    next(s);
}

/* next issues the stream's next call, or marks it finished. */
static void next(struct stream *s) {
    char path[512];
    int rc = 0;
    switch (s->kind) {
    case READ:
        if (s->step == 0) {
            snprintf(path, sizeof path, "%s/r%d", dir, s->id);
            rc = nfs_open_async(nfs, path, O_RDONLY, cb, s);
        } else if (s->done < s->goal) {
            rc = nfs_pread_async(nfs, s->fh, s->done, CHUNK, cb, s);
        } else if (s->fh) {
            struct nfsfh *fh = s->fh;
            s->fh = NULL;
            rc = nfs_close_async(nfs, fh, cb, s);
        } else {
            finish(s);
        }
        break;
    case WRITE:
        if (s->step == 0) {
            snprintf(path, sizeof path, "%s/w%d", dir, s->id);
            rc = nfs_creat_async(nfs, path, 0644, cb, s);
        } else if (s->done < s->goal) {
            rc = nfs_pwrite_async(nfs, s->fh, s->done, CHUNK, chunk, cb, s);
        } else if (s->done == s->goal) {
            s->done++; /* past the goal: the COMMIT is next, then the close */
            rc = nfs_fsync_async(nfs, s->fh, cb, s);
        } else if (s->fh) {
            struct nfsfh *fh = s->fh;
            s->fh = NULL;
            rc = nfs_close_async(nfs, fh, cb, s);
        } else {
            s->done--;
            finish(s);
        }
        break;
    case CREATE:
        if (s->done >= s->goal) {
            finish(s);
            break;
        }
        switch (s->step % 3) {
        case 0:
            snprintf(path, sizeof path, "%s/c%d_%05ld", dir, s->id, s->done);
            rc = nfs_creat_async(nfs, path, 0644, cb, s);
            break;
        case 1:
            rc = nfs_pwrite_async(nfs, s->fh, 0, 4096, chunk, cb, s);
            break;
        case 2:
            rc = nfs_close_async(nfs, s->fh, cb, s);
            break;
        }
        break;
    case STAT:
        if (s->done >= s->goal) {
            finish(s);
            break;
        }
        snprintf(path, sizeof path, "%s/r0", dir);
        rc = nfs_stat64_async(nfs, path, cb, s);
        break;
    }
    if (rc != 0) die(kname[s->kind], NULL);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: nfspar URL DIR [MIB] [CREATES] [STATS]\n");
        return 2;
    }
    long mib = argc > 3 ? atol(argv[3]) : 32;
    long creates = argc > 4 ? atol(argv[4]) : 500;
    long stats = argc > 5 ? atol(argv[5]) : 4000;
    dir = argv[2];
    nfs = nfs_init_context();
    if (!nfs) die("init", "no context");
    struct nfs_url *url = nfs_parse_url_dir(nfs, argv[1]);
    if (!url) die("parse url", NULL);
    if (nfs_mount(nfs, url->server, url->path) != 0) die("mount", NULL);
    chunk = malloc(CHUNK);
    for (int i = 0; i < CHUNK; i++) chunk[i] = (char)(i * 131 + 7);

    /* setup, synchronous and untimed: the directory and the readers' files */
    if (nfs_mkdir(nfs, dir) != 0) die("mkdir", NULL);
    struct stream st[STREAMS];
    for (int i = 0; i < STREAMS; i++) {
        st[i] = (struct stream){.id = i, .kind = (enum kind)(i % 4)};
        switch (st[i].kind) {
        case READ: case WRITE: st[i].goal = mib * CHUNK; break;
        case CREATE: st[i].goal = creates; break;
        case STAT: st[i].goal = stats; break;
        }
        if (st[i].kind != READ) continue;
        char path[512];
        struct nfsfh *fh;
        snprintf(path, sizeof path, "%s/r%d", dir, i);
        if (nfs_creat(nfs, path, 0644, &fh) != 0) die("setup creat", NULL);
        for (long off = 0; off < st[i].goal; off += CHUNK)
            if (nfs_pwrite(nfs, fh, off, CHUNK, chunk) != CHUNK) die("setup write", NULL);
        if (nfs_close(nfs, fh) != 0) die("setup close", NULL);
    }

    t0 = now();
    running = STREAMS;
    for (int i = 0; i < STREAMS; i++) next(&st[i]);
    while (running > 0) {
        if (now() - t0 > DEADLINE_S) die("deadline", "120 s passed");
        struct pollfd pfd = {.fd = nfs_get_fd(nfs), .events = nfs_which_events(nfs)};
        if (poll(&pfd, 1, 1000) < 0) die("poll", strerror(errno));
        if (nfs_service(nfs, pfd.revents) < 0) die("service", NULL);
    }
    double secs = now() - t0, last[4] = {0};
    for (int i = 0; i < STREAMS; i++)
        if (st[i].finished > last[st[i].kind]) last[st[i].kind] = st[i].finished;
    printf("par streams=%d secs=%.3f read_s=%.3f write_s=%.3f create_s=%.3f stat_s=%.3f mib=%ld creates=%ld stats=%ld\n",
           STREAMS, secs, last[READ], last[WRITE], last[CREATE], last[STAT], mib, creates, stats);
    nfs_destroy_url(url);
    nfs_destroy_context(nfs);
    return 0;
}
