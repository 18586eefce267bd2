/*
 * cpus.c - the affinity mask and the cgroup CPU quota, read once.
 */
#include "lib/cpus.h"

#include <sched.h>
#include <stdio.h>
#include <unistd.h>

/* The first line of a small file into buf; 0, or -1 when unreadable. */
static int
read_line(const char *path, char *buf, int len)
{
    FILE *f = fopen(path, "r");
    int ok;

    if (f == NULL)
        return -1;
    ok = fgets(buf, len, f) != NULL;
    fclose(f);
    return ok ? 0 : -1;
}

/* The quota in whole CPUs, rounded up; 0 when there is none. */
static unsigned int
cgroup_quota_cpus(void)
{
    char line[64], line2[64];
    long long quota = 0, period = 0;

    /* v2: "max 100000" when unlimited, "150000 100000" for 1.5 CPUs. */
    if (read_line("/sys/fs/cgroup/cpu.max", line, sizeof(line)) == 0) {
        if (sscanf(line, "%lld %lld", &quota, &period) != 2)
            return 0;
    } else if (read_line("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", line,
                         sizeof(line)) == 0 &&
               read_line("/sys/fs/cgroup/cpu/cpu.cfs_period_us", line2,
                         sizeof(line2)) == 0) {
        /* v1: the quota is -1 when unlimited. */
        if (sscanf(line, "%lld", &quota) != 1 ||
            sscanf(line2, "%lld", &period) != 1)
            return 0;
    }
    if (quota <= 0 || period <= 0)
        return 0;
    return (unsigned int)((quota + period - 1) / period);
}

unsigned int
cpus_usable(void)
{
    cpu_set_t set;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned int n = online > 0 ? (unsigned int)online : 1;
    unsigned int quota = cgroup_quota_cpus();

    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        n = (unsigned int)CPU_COUNT(&set);
    if (quota > 0 && quota < n)
        n = quota;
    return n;
}
