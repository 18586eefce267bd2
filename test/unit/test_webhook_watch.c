/*
 * test_webhook_watch.c - watch_poll() on real files: an edit in place, the
 * kubelet's ..data symlink swap, a file that goes away, and the settling
 * poll that keeps a file written in two steps from being read half-way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/unit/check.h"
#include "lib/watch.h"

static char dir[] = "/tmp/topogate-watch.XXXXXX";

static void
put(const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    if (f != NULL) {
        fputs(text, f);
        fclose(f);
    }
}

/* Points dir/..data at dir/target the kubelet's way: a rename over it. */
static void
swap(const char *target)
{
    char tmp[256], data[256];

    snprintf(tmp, sizeof(tmp), "%s/..data_tmp", dir);
    snprintf(data, sizeof(data), "%s/..data", dir);
    unlink(tmp);
    if (symlink(target, tmp) != 0 || rename(tmp, data) != 0)
        perror("swap");
}

int
main(void)
{
    struct watch w;
    char plain[256], linked[256], cmd[300];
    const char *paths[] = {plain, NULL, linked};

    if (mkdtemp(dir) == NULL)
        return 1;
    snprintf(plain, sizeof(plain), "%s/plain", dir);
    snprintf(linked, sizeof(linked), "%s/linked", dir);
    put("plain", "one");
    snprintf(cmd, sizeof(cmd), "%s/v1", dir);
    mkdir(cmd, 0700);
    snprintf(cmd, sizeof(cmd), "%s/v2", dir);
    mkdir(cmd, 0700);
    put("v1/linked", "first");
    put("v2/linked", "second");
    swap("v1");
    if (symlink("..data/linked", linked) != 0)
        perror("symlink");

    watch_init(&w, paths, 3);
    CHECK_INT(w.n, 2); /* the NULL path is skipped */
    CHECK(!watch_poll(&w));
    CHECK(!watch_poll(&w));

    /* An edit in place: seen at the second poll, once. */
    put("plain", "three");
    CHECK(!watch_poll(&w));
    CHECK(watch_poll(&w));
    CHECK(!watch_poll(&w));

    /* Written again between two polls: wait until it holds still. */
    put("plain", "four!");
    CHECK(!watch_poll(&w));
    put("plain", "five!!");
    CHECK(!watch_poll(&w));
    CHECK(watch_poll(&w));

    /* The kubelet's swap: the link itself never changes, its target does. */
    swap("v2");
    CHECK(!watch_poll(&w));
    CHECK(watch_poll(&w));
    CHECK(!watch_poll(&w));

    /* Gone is a change too (the reload then fails and keeps the old). */
    unlink(plain);
    CHECK(!watch_poll(&w));
    CHECK(watch_poll(&w));
    CHECK(!watch_poll(&w));

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        perror(cmd);
    CHECK_DONE();
}
