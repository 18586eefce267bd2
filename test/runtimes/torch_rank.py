#!/usr/bin/python3
"""test/runtimes/torch_rank.py DIR: the script torchrun starts in place of
the job's training script, for test/runtimes/harness.py. Each worker joins
the process group over gloo (CPU) with the rendezvous torchrun set up, then
writes DIR/rank.<rank>: its rank, the world size the group has, the local
world size and group (node) count torchrun gave it, and every variable of
its environment. Other arguments (the job's own) are ignored.
"""

import os
import sys

import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
lines = ["rank world=%d local_world=%s group_world=%s" % (
    dist.get_world_size(), os.environ.get("LOCAL_WORLD_SIZE", "none"),
    os.environ.get("GROUP_WORLD_SIZE", "none"))]
lines += ["env %s=%s" % kv for kv in sorted(os.environ.items())
          if "\n" not in kv[1]]
path = os.path.join(sys.argv[1], "rank.%d" % rank)
with open(path + ".tmp", "w") as f:
    f.write("\n".join(lines) + "\n")
os.rename(path + ".tmp", path)
dist.barrier()
dist.destroy_process_group()
