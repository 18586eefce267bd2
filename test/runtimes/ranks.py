"""What a launch on this machine showed: the rank.N files the stand-in
programs (mpi_rank.sh, torch_rank.py) write, read back, and one way to
run a launcher line under a time limit. mpi.py and torchlaunch.py each
keep their own Result for what of a failed run's output is worth
showing."""

import os
import re
import subprocess


def read_ranks(d):
    """{rank: {"env": {...}, key: value...}} from the rank.N files the
    stand-in programs write."""
    ranks = {}
    for name in os.listdir(d) if os.path.isdir(d) else []:
        m = re.fullmatch(r"rank\.(\d+)", name)
        if not m:
            continue
        r = ranks[int(m.group(1))] = {"env": {}}
        with open(os.path.join(d, name), errors="replace") as f:
            for line in f.read().splitlines():
                kind, _, rest = line.partition(" ")
                if kind == "rank":
                    for kv in rest.split():
                        k, _, v = kv.partition("=")
                        r[k] = v
                elif kind == "env":
                    k, eq, v = rest.partition("=")
                    if eq:
                        r["env"][k] = v
    return ranks


class Result:
    """What a run showed: rc, ranks {rank: {"size", "host", "env"}}, the
    world sizes the ranks printed, and its output."""

    def __init__(self, rc, out, err, ranks):
        self.rc = rc
        self.out = out
        self.err = err
        self.ranks = ranks
        self.sizes = {r.get("size", "none") for r in self.ranks.values()}

    def lines(self):
        return [ln for ln in (self.err + "\n" + self.out).splitlines()
                if ln.strip()]


def launch(plan, cwd, out, limit, grace, result, what):
    """Runs plan.argv + [out] with plan.env in cwd, killed past limit
    seconds (and grace more if it ignores SIGTERM); a result(...) of it."""
    try:
        p = subprocess.run(["timeout", "-k", str(grace), str(limit)] +
                           plan.argv + [out], env=plan.env, cwd=cwd,
                           capture_output=True, timeout=limit + 2 * grace + 4)
    except subprocess.TimeoutExpired:
        return result(124, "", "harness: %s did not finish" % what, {})
    return result(p.returncode, p.stdout.decode(errors="replace"),
                  p.stderr.decode(errors="replace"), read_ranks(out))
