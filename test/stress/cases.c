/* cases.c - golden cases as ready-to-send HTTP requests. */
#include "cases.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *
slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
        fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
        *len = fread(buf, 1, (size_t)n, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

static int
exists(const char *dir, const char *name, const char *ext)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext);
    return access(path, F_OK) == 0;
}

static int
load_one(const char *dir, const char *name, size_t pad, struct fixture *fx)
{
    char path[4096];
    size_t in_len, body_len, head_len;
    char *in, head[256];

    snprintf(path, sizeof(path), "%s/%s.in.json", dir, name);
    if ((in = slurp(path, &in_len)) == NULL)
        return -1;
    snprintf(path, sizeof(path), "%s/%s.out.json", dir, name);
    if ((fx->answer = slurp(path, &fx->answer_len)) == NULL) {
        free(in);
        return -1;
    }
    body_len = in_len < pad ? pad : in_len;
    head_len = (size_t)snprintf(head, sizeof(head),
                                "POST /mutate?timeout=10s HTTP/1.1\r\n"
                                "Host: 127.0.0.1\r\n"
                                "Content-Type: application/json\r\n"
                                "Content-Length: %zu\r\n\r\n",
                                body_len);
    fx->request_len = head_len + body_len;
    fx->request = malloc(fx->request_len);
    if (fx->request == NULL) {
        free(in);
        return -1;
    }
    memcpy(fx->request, head, head_len);
    memcpy(fx->request + head_len, in, in_len);
    /* Whitespace after the JSON value: the same review, a bigger body. */
    memset(fx->request + head_len + in_len, ' ', body_len - in_len);
    free(in);
    fx->name = strdup(name);
    fx->status = strstr(fx->answer, "\"kind\":\"Status\"") ? 400 : 200;
    return 0;
}

static int
by_name(const void *a, const void *b)
{
    return strcmp(((const struct fixture *)a)->name,
                  ((const struct fixture *)b)->name);
}

int
cases_load(const char *dir, size_t pad, struct fixture **out)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct fixture *all = NULL;
    int n = 0;

    if (d == NULL) {
        perror(dir);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char name[1024];
        struct fixture *grown;

        if (len <= 8 || len >= sizeof(name) ||
            strcmp(e->d_name + len - 8, ".in.json") != 0)
            continue;
        memcpy(name, e->d_name, len - 8);
        name[len - 8] = '\0';
        if (exists(dir, name, ".args") || exists(dir, name, ".policy"))
            continue; /* needs flags or a policy this server lacks */
        grown = realloc(all, sizeof(*all) * (size_t)(n + 1));
        if (grown == NULL)
            break;
        all = grown;
        if (load_one(dir, name, pad, &all[n]) == 0)
            n++;
    }
    closedir(d);
    if (n == 0) {
        fprintf(stderr, "stressc: no cases in %s\n", dir);
        free(all);
        return -1;
    }
    qsort(all, (size_t)n, sizeof(*all), by_name); /* readdir has no order */
    *out = all;
    return n;
}
