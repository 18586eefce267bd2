#!/bin/sh
# test/runtimes/rsh_agent.sh: stands in for ssh as Open MPI's rsh agent
# (mpirun --mca plm_rsh_agent), for test/runtimes/harness.py.
#
# mpirun runs `AGENT [ssh options] HOST orted ...` once per host of its
# hostfile. On a cluster sshd starts that orted in a login environment,
# not the launcher's: a rank sees only what mpirun forwards (-x NAME,
# mca_base_env_list, OMPI_MCA_*) and its login's PATH and HOME. So here
# the orted runs on this machine under `env -i` with just those: a
# variable mpirun does not forward is missing in the rank, as it would be
# on the worker. Each host gets its own TMPDIR, as each node has its own
# /tmp (orteds sharing one session directory step on each other).
# RT_HOST tells the rank which host it stands for.
while [ $# -gt 0 ]; do
	case $1 in
	-[bcDEeFIiJLlmOopQRSWw]) shift 2 ;; # ssh options that take a value
	-*) shift ;;
	*) break ;;
	esac
done
host=$1
shift
dir=${TMPDIR:-/tmp}/rt-host-$host
mkdir -p "$dir" || exit 255
exec env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="${HOME:-/root}" \
	RT_HOST="$host" TMPDIR="$dir" /bin/sh -c "$*"
