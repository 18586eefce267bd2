/*
 * cpus.h - how many CPUs this process may really use.
 *
 * sysconf(_SC_NPROCESSORS_ONLN) counts the node's CPUs. A pod runs with a
 * CPU limit (a cgroup quota) and sometimes an affinity mask; threads past
 * that number only take turns on the same CPU time and switch more.
 */
#ifndef TOPOGATE_CPUS_H
#define TOPOGATE_CPUS_H

/*
 * The CPUs in this process's affinity mask, lowered to the cgroup CPU
 * quota rounded up (cgroup v2 cpu.max or v1 cpu.cfs_quota_us). At least 1.
 */
unsigned int cpus_usable(void);

#endif
