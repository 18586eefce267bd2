/*
 * labels.h - the label and annotation names topogate reads and writes:
 * the training operators' own constants (docs/facts/kubeflow-pods.md),
 * topogate's annotations, and the node label that pins an instance type.
 * One list, so that what expand.c stamps on a pod is what workload.c
 * recognises.
 */
#ifndef TOPOGATE_LABELS_H
#define TOPOGATE_LABELS_H

/* Training Operator v1 and mpi-operator v2. */
#define LABEL_OPERATOR "training.kubeflow.org/operator-name"
#define LABEL_JOB_NAME "training.kubeflow.org/job-name"
#define LABEL_REPLICA_TYPE "training.kubeflow.org/replica-type"
#define LABEL_REPLICA_INDEX "training.kubeflow.org/replica-index"
/* mpi-operator v2 marks its roles here instead of replica-type. */
#define LABEL_JOB_ROLE "training.kubeflow.org/job-role"

/* JobSet, under Trainer v2's TrainJob. */
#define LABEL_JOBSET "jobset.sigs.k8s.io/jobset-name"
#define LABEL_REPLICATED_JOB "jobset.sigs.k8s.io/replicatedjob-name"
#define LABEL_RJ_REPLICAS "jobset.sigs.k8s.io/replicatedjob-replicas"
#define LABEL_JOB_INDEX "jobset.sigs.k8s.io/job-index"
/* Trainer v2 names both its replicated job and its container "node". */
#define TRAINER_NODE "node"

/* topogate's own. */
#define LABEL_MANAGED "topogate.io/managed"
#define ANNOTATION_SKIP "topogate.io/skip"
#define ANNOTATION_WHOLE_NODE "topogate.io/whole-node"
#define ANNOTATION_REPACKED "topogate.io/repacked"

/* Kueue's: the LocalQueue a job or pod is submitted to. */
#define LABEL_QUEUE_NAME "kueue.x-k8s.io/queue-name"

/* GFD's, on GPUs in a multi-node NVLink fabric (GB200/GB300): the
 * fabric's cluster UUID and clique ID. */
#define LABEL_GPU_CLIQUE "nvidia.com/gpu.clique"

/* The well-known node label of the instance type. */
#define LABEL_INSTANCE_TYPE "node.kubernetes.io/instance-type"

#endif
