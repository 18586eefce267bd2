#!/bin/sh
# test/runtimes/mpi_rank.sh DIR: the program mpirun starts in place of the
# job's (all_reduce_perf, python train.py, torchrun ...), for
# test/runtimes/harness.py. Each rank writes DIR/rank.<rank>: its rank,
# the world size and the host it stands for, then every variable of its
# environment. A file, not stdout: Open MPI forwards output in chunks, and
# a line of one rank can be cut by another's. It needs nothing but
# /bin/sh: what it shows is what Open MPI handed the rank.
r=${OMPI_COMM_WORLD_RANK:-none}
f=$1/rank.$r
{
	echo "rank size=${OMPI_COMM_WORLD_SIZE:-none} host=${RT_HOST:-launcher}"
	env | sed 's/^/env /'
} >"$f.tmp" && mv "$f.tmp" "$f"
