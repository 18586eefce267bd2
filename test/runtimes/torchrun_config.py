#!/usr/bin/python3
"""test/runtimes/torchrun_config.py < ITEMS.json: what torchrun would
start for each item, read by torch's own parser, for harness.py.

Each item is {"entry": "run"|"launch", "argv": [torchrun's arguments],
"env": {...}, "gpus": N}. For each, the process environment becomes env
(torchrun reads every option's default from PET_<NAME> when its parser is
built), then torch.distributed.run's parse_args() and config_from_args()
run as torchrun runs them, and one JSON object per item is printed:
min_nodes, max_nodes, nproc (local world size), node_rank, rdzv_backend,
rdzv_endpoint, standalone, script; or error. "auto" and "gpu" as
--nproc_per_node mean torch.cuda.device_count() on the node, which is the
container's nvidia.com/gpu: that count stands in for the GPUs this
machine does not have (a pod with no GPU keeps torch's CPU count).
"""

import contextlib
import io
import json
import logging
import os
import sys

from torch.distributed import run

import torchrun_shim

logging.disable(logging.CRITICAL)
torchrun_shim.fix_std()


def parse(item):
    os.environ.clear()
    os.environ.update(item["env"])
    if item.get("entry") == "launch":
        from torch.distributed import launch
        args = launch.parse_args(item["argv"])
    else:
        args = run.parse_args(item["argv"])
    nproc_word = args.nproc_per_node
    if args.nproc_per_node in ("auto", "gpu") and item.get("gpus"):
        args.nproc_per_node = str(item["gpus"])
    if args.standalone:
        args.rdzv_backend = "c10d"
        args.rdzv_endpoint = "localhost:29400"
    config, cmd, cmd_args = run.config_from_args(args)
    return {"min_nodes": config.min_nodes, "max_nodes": config.max_nodes,
            "nproc": config.nproc_per_node, "nproc_word": nproc_word,
            "node_rank": args.node_rank,
            "rdzv_backend": config.rdzv_backend,
            "rdzv_endpoint": config.rdzv_endpoint,
            "standalone": bool(args.standalone),
            "script": args.training_script,
            "no_python": bool(args.no_python), "module": bool(args.module)}


def main():
    items = json.load(sys.stdin)
    out = []
    for item in items:
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                out.append(parse(item))
        except SystemExit:
            out.append({"error": err.getvalue().strip().splitlines()[-1:]
                        or ["torchrun's parser exited"]})
        except Exception as e:  # what torchrun itself would die of
            out.append({"error": ["%s: %s" % (type(e).__name__, e)]})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
