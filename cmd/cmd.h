/*
 * cmd.h - the subcommands of `topogate`. Each takes the arguments after
 * its own name (argv[0] is the subcommand) and returns the exit status.
 * cmd/ is the only place that may exit().
 */
#ifndef TOPOGATE_CMD_H
#define TOPOGATE_CMD_H

#include <stdio.h>

int cmd_serve(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_tables(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_certgen(int argc, char **argv);

/*
 * Loads --policy FILE, or the embedded policy when path is NULL, and
 * applies mode_override when not NULL. Prints "file:line:col: message" to
 * stderr and returns NULL on error.
 */
struct snapshot;
struct snapshot *cmd_load_policy(const char *path, const char *mode_override);

#endif
