/*
 * frameworks.h - what the pods of a framework governed by what it is
 * (the kinds.c rows with a framework) say about their job, where
 * PET_NNODES says nothing: each reader fills w->pods, pods_known and
 * launcher from the labels, annotations and env its controller sets.
 * w is already read (workload_read()); the readers borrow from pod.
 */
#ifndef TOPOGATE_FRAMEWORKS_H
#define TOPOGATE_FRAMEWORKS_H

#include <cjson/cJSON.h>

#include "policy/kinds/workload.h"

/* Volcano's mpi and pytorch plugins: the port each opens on every
 * container of the job's pods, by name (volcano-sh/volcano
 * pkg/controllers/job/plugins/distributed-framework/{mpi/mpi.go,
 * pytorch/pytorch.go} openContainerPort). */
#define VOLCANO_MPI_PORT "mpijob-port"
#define VOLCANO_PYTORCH_PORT "pytorchjob-port"

void framework_read_volcano(const cJSON *pod, struct workload *w);
void framework_read_lws(const cJSON *pod, struct workload *w);
void framework_read_jobset(const cJSON *pod, struct workload *w);
void framework_read_mpi_v1alpha2(const cJSON *pod, struct workload *w);
void framework_read_gang(const cJSON *pod, struct workload *w);

#endif
