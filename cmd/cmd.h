/*
 * cmd.h - the subcommands of `topogate`. Each takes the arguments after
 * its own name (argv[0] is the subcommand) and returns the exit status.
 * cmd/ is the only place that may exit().
 */
#ifndef TOPOGATE_CMD_H
#define TOPOGATE_CMD_H

#include <stdbool.h>

#include <stdio.h>

int cmd_serve(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_tables(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_certgen(int argc, char **argv);
int cmd_nodes(int argc, char **argv);

/*
 * Reads Node objects (a List too) and Kueue's from a file into x; items
 * without a kind are Nodes. The number of Nodes read, or -1 with the
 * reason on stderr.
 */
struct view_index;
int cmd_view_read(struct view_index *x, const char *path);

/*
 * The command line's overrides of the policy: --mode (NULL: none) and
 * --repack, into *out. Prints why and returns -1 for an unknown mode.
 */
struct snapshot_opts;
int cmd_policy_opts(const char *mode, bool repack, struct snapshot_opts *out);

/*
 * Loads --policy FILE, or the embedded policy when path is NULL, with
 * opts (may be NULL). Prints "file:line:col: message" to stderr and
 * returns NULL on error.
 */
struct snapshot;
struct snapshot *cmd_load_policy(const char *path,
                                 const struct snapshot_opts *opts);

#endif
