/*
 * embedded_policy.h - for the fuzz targets that decide: the embedded
 * policy, loaded once by libFuzzer before the first input. Included by
 * one target file each (it defines LLVMFuzzerInitialize).
 */
#ifndef TOPOGATE_FUZZ_EMBEDDED_POLICY_H
#define TOPOGATE_FUZZ_EMBEDDED_POLICY_H

#include <stdio.h>
#include <stdlib.h>

#include "policy/table/snapshot.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct snapshot *fuzz_snapshot;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct load_error err;

    (void)argc;
    (void)argv;
    fuzz_snapshot = snapshot_parse_embedded(NULL, &err);
    if (fuzz_snapshot == NULL) {
        fprintf(stderr, "embedded policy:%d:%d: %s\n", err.line, err.column,
                err.message);
        abort();
    }
    return 0;
}

#endif
