/*
 * job.h - job-level admission: a TrainJob, PyTorchJob or MPIJob judged as
 * a whole when it is created, where `kubectl apply` shows the refusal,
 * instead of pod by pod where it only becomes FailedCreate events.
 */
#ifndef TOPOGATE_JOB_H
#define TOPOGATE_JOB_H

#include <stdbool.h>

#include "policy/decide.h"

/* TrainJob (trainer.kubeflow.org), PyTorchJob or MPIJob (kubeflow.org). */
bool job_kind(const char *group, const char *kind);

/* decide() for those kinds; same contract. */
int decide_job(const struct snapshot *s, const struct admission *req,
               struct decision *d);

#endif
