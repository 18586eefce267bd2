/*
 * launch.h - what a container's command line fixes about its job's shape:
 * torchrun's --nnodes and --nproc_per_node, mpirun's -np and ranks per
 * node, a world size.
 * Only literal numbers count; "$PET_NNODES" follows the spec and is fine.
 */
#ifndef TOPOGATE_LAUNCH_H
#define TOPOGATE_LAUNCH_H

#include <stdbool.h>

#include <cjson/cJSON.h>

struct launch {
    long nnodes; /* --nnodes N (the maximum of "min:max"); -1 if absent */
    long nproc;  /* --nproc_per_node / --nproc-per-node N; -1 if absent */
    long np;     /* mpirun -np / -n N; -1 if absent */
    long world;  /* --world-size / --world_size / WORLD_SIZE=N; -1 if absent */
    long per_node; /* mpirun -npernode / -N N, --map-by ppr:N:node; -1 */
    /* All of them as written, quoted, in command order:
     * "'--nnodes 2' and '--nproc_per_node 1'" (cut past 127 bytes). */
    char written[128];
};

/* Reads command and args of one container. */
void launch_read(const cJSON *container, struct launch *out);

bool launch_hardcoded(const struct launch *l);

/*
 * Whether the container's command line exports name to MPI ranks itself:
 * mpirun "-x NAME" or "-x NAME=value".
 */
bool launch_exports(const cJSON *container, const char *name);

/* Whether a word of the command line is word ("mca_base_env_list"). */
bool launch_has_word(const cJSON *container, const char *word);

/*
 * Whether the command line itself runs mpirun (or mpiexec, orterun,
 * prterun, by any path): false for a script whose contents we cannot see.
 */
bool launch_runs_mpirun(const cJSON *container);

/*
 * Whether a word of the command line, or an env entry's name or value,
 * holds text ("OMPI_COMM_WORLD_RANK" in NODE_RANK=$OMPI_COMM_WORLD_RANK).
 */
bool launch_mentions(const cJSON *container, const char *text);

#endif
