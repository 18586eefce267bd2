/* main.c - `topogate COMMAND ...`: dispatch, and loading the policy. */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "policy/table/snapshot.h"
#include "lib/policyfile.h"
#include "lib/file.h"

/*
 * `topogate certgen` is topogate-certgen, in the directory of this
 * executable (as `git foo` is git-foo): see cmd/certgen_main.c.
 */
static int
run_certgen(int argc, char **argv)
{
    static const char helper[] = "topogate-certgen";
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    char *slash;

    (void)argc;
    if (n < 0) {
        fprintf(stderr, "topogate certgen: /proc/self/exe: %s\n",
                strerror(errno));
        return 1;
    }
    path[n] = '\0';
    slash = strrchr(path, '/');
    if (slash == NULL || (size_t)(slash + 1 - path) + sizeof(helper) >
                             sizeof(path)) {
        fprintf(stderr, "topogate certgen: cannot place %s beside '%s'\n",
                helper, path);
        return 1;
    }
    memcpy(slash + 1, helper, sizeof(helper));
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "topogate certgen: cannot run '%s': %s\n", path,
            strerror(errno));
    return 1;
}

static const struct {
    const char *name;
    int (*run)(int, char **);
} commands[] = {
    {"serve", cmd_serve},     {"audit", cmd_audit},     {"tables", cmd_tables},
    {"version", cmd_version}, {"certgen", run_certgen},
    {"nodes", cmd_nodes},
};

static void
usage(FILE *f)
{
    fputs("usage: topogate serve [--listen ADDR:PORT] [--probe-listen "
          "ADDR:PORT]\n"
          "                      --tls-cert FILE --tls-key FILE [--policy "
          "FILE]\n"
          "                      [--client-ca FILE]\n"
          "                      [--mode enforce|warn|audit] [-n]\n"
          "       topogate audit --review - [--policy FILE] [--mode MODE]\n"
          "       topogate tables [--policy FILE]\n"
          "       topogate certgen --service NAME --namespace NS --out DIR\n"
          "                        [--secret-name NAME] [--webhook-config "
          "NAME --webhooks N]\n"
          "                        [--days D]\n"
          "       topogate version\n",
          f);
}

int
cmd_policy_opts(const char *mode, bool repack, struct snapshot_opts *out)
{
    *out = (struct snapshot_opts){.force_mode = mode != NULL,
                                  .force_repack = repack};
    if (mode && mode_parse(mode, &out->mode) < 0) {
        fprintf(stderr,
                "topogate: unknown mode '%s' (enforce, warn or "
                "audit)\n",
                mode);
        return -1;
    }
    return 0;
}

struct snapshot *
cmd_load_policy(const char *path, const struct snapshot_opts *opts)
{
    char err[512];
    struct snapshot *s = policyfile_load(path, opts, err, sizeof(err));

    if (s == NULL)
        fprintf(stderr, "topogate: %s\n", err);
    return s;
}

int
main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "topogate: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
