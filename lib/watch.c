/* watch.c - stat() signatures of a few files, compared poll to poll. */
#include "lib/watch.h"

#include <errno.h>
#include <string.h>

static void
watch_stat(const char *path, struct watch_sig *sig)
{
    struct stat st;

    memset(sig, 0, sizeof(*sig));
    if (stat(path, &st) != 0) {
        sig->err = errno != 0 ? errno : EIO;
        return;
    }
    sig->dev = st.st_dev;
    sig->ino = st.st_ino;
    sig->size = st.st_size;
    sig->mtime = st.st_mtim;
    sig->ctime = st.st_ctim;
}

static bool
watch_same(const struct watch_sig *a, const struct watch_sig *b)
{
    return a->err == b->err && a->dev == b->dev && a->ino == b->ino &&
           a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec &&
           a->ctime.tv_sec == b->ctime.tv_sec &&
           a->ctime.tv_nsec == b->ctime.tv_nsec;
}

void
watch_init(struct watch *w, const char *const *paths, size_t n)
{
    memset(w, 0, sizeof(*w));
    for (size_t i = 0; i < n && w->n < WATCH_FILES; i++) {
        if (paths[i] == NULL)
            continue;
        w->paths[w->n] = paths[i];
        watch_stat(paths[i], &w->loaded[w->n]);
        w->polled[w->n] = w->loaded[w->n];
        w->n++;
    }
}

bool
watch_poll(struct watch *w)
{
    struct watch_sig now[WATCH_FILES];
    bool settled = true, changed = false;

    for (size_t i = 0; i < w->n; i++) {
        watch_stat(w->paths[i], &now[i]);
        if (!watch_same(&now[i], &w->polled[i]))
            settled = false;
        if (!watch_same(&now[i], &w->loaded[i]))
            changed = true;
        w->polled[i] = now[i];
    }
    if (!settled || !changed)
        return false;
    memcpy(w->loaded, now, sizeof(now[0]) * w->n);
    return true;
}
