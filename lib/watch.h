/*
 * watch.h - noticing that a group of files changed, by polling stat().
 *
 * stat() follows symlinks, so the kubelet's way of updating a mounted
 * ConfigMap or Secret (a new directory, then the `..data` symlink
 * renamed over) shows up as a new device/inode, and an edit in place as
 * a new size or time. Polling was chosen over inotify: inotify watches
 * the link, not what it points to, and misses a swap of a parent link.
 *
 * A change is reported only once the group has looked the same for two
 * polls in a row, so a file written in several steps, or a certificate
 * whose key follows a moment later, is read once, whole. The struct is
 * plain data owned by the caller; it borrows the paths.
 */
#ifndef TOPOGATE_WATCH_H
#define TOPOGATE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#define WATCH_FILES 3

/* What stat() said of one path; err is its errno, or 0. */
struct watch_sig {
    int err;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    struct timespec ctime;
};

struct watch {
    const char *paths[WATCH_FILES];
    size_t n;
    struct watch_sig loaded[WATCH_FILES]; /* as of the last report */
    struct watch_sig polled[WATCH_FILES]; /* as of the last poll */
};

/*
 * Starts watching up to WATCH_FILES paths (NULL entries are skipped), as
 * they are now: the state just loaded.
 */
void watch_init(struct watch *w, const char *const *paths, size_t n);

/*
 * Polls once. True when the files differ from what was last reported
 * (or from watch_init()) and have not changed since the previous poll;
 * the new state then counts as reported, whether loading it works or
 * not, so a bad file is tried once, not at every poll.
 */
bool watch_poll(struct watch *w);

#endif
