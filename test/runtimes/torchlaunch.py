"""Reading and running a container's torchrun line (torch 1.13, gloo, CPU).

config_items()/configs() ask torch's own parser (torchrun_config.py) what
each torchrun line starts in its container's env: nodes, processes per
node, rendezvous. local_run() then starts one of them here for real, with
torch_rank.py in place of the training script. What changes, and why:

  - --nnodes (and PET_NNODES) becomes 1 when the job has more nodes: the
    other nodes' agents are not here, and torchrun would wait for them.
    The per-node shape (--nproc_per_node) is kept: that is what one node
    of the job starts, and what is checked.
  - --node_rank 0, master and rendezvous addresses 127.0.0.1 with a free
    port: the job's are pod DNS names.
  - auto/gpu as --nproc_per_node become the container's nvidia.com/gpu
    (torch.cuda.device_count() on the node; this machine has no GPU).
  - --nproc-per-node style spellings become --nproc_per_node: torch 2.x
    takes both, Debian's 1.13 only the underscore.
  - --monitor_interval 0.5: how often the agent polls its workers (5 s by
    default): it shortens the test, not the job.
  - --run_path --start_method fork: the workers are forked from the agent,
    which has torch loaded, instead of started as new Python processes
    that each load torch again (30 s for 8 on 2 busy CPUs, against 5).
    The rendezvous, the group and the env torchrun gives each worker are
    the same; --no_python, -m and the job's --start_method go with it.
  - --log_dir goes (a path of the image); PYTHONHOME and LD_PRELOAD go from
    the env (they would point /usr/bin/python3 at the image's files).
"""

import json
import os
import socket
import subprocess
import tempfile

import ranks
from shellcmd import Unresolved

VALUE_OPTS = {
    "nnodes", "nproc_per_node", "rdzv_backend", "rdzv_endpoint", "rdzv_id",
    "rdzv_conf", "max_restarts", "monitor_interval", "start_method", "role",
    "log_dir", "redirects", "tee", "node_rank", "master_addr", "master_port",
    "local_addr", "r", "t",
}
FLAG_OPTS = {"standalone", "module", "m", "no_python", "run_path", "use_env"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def normalize(words):
    """torchrun's words with --opt-name spellings as --opt_name."""
    out = []
    for w in words:
        if isinstance(w, Unresolved) or not w.startswith("--"):
            out.append(w)
            continue
        name, eq, val = w[2:].partition("=")
        u = name.replace("-", "_")
        out.append("--" + (u if u in VALUE_OPTS | FLAG_OPTS else name) +
                   eq + val)
    return out


def split(words):
    """(options [(name, value or None, as written)], script, script args)."""
    opts = []
    i = 0
    while i < len(words):
        w = words[i]
        if not str(w).startswith("-") or w == "-":
            return opts, w, words[i + 1:]
        name, eq, val = w.lstrip("-").partition("=")
        if name in VALUE_OPTS:
            if eq:
                opts.append((name, val, [w]))
                i += 1
            else:
                v = words[i + 1] if i + 1 < len(words) else None
                opts.append((name, v, [w] + ([v] if v is not None else [])))
                i += 2
            continue
        opts.append((name, None, [w]))
        i += 1
    return opts, None, []


def unexpanded(words):
    return [w for w in words if isinstance(w, Unresolved)]


def config_items(launch, env, gpus):
    """The torchrun_config.py item for a launch, or a str saying why the
    line cannot be read (a word the harness could not expand)."""
    words = normalize(launch.words)
    opts, script, _ = split(words)
    bad = [w for _, _, written in opts for w in written
           if isinstance(w, Unresolved)]
    if bad:
        return "torchrun option %s not expanded" % bad[0]
    if script is None:
        return "torchrun starts no script"
    cut = len(words) - len(split(words)[2])
    e = dict(env, **launch.env_add)
    return {"entry": launch.torch_entry, "argv": [str(w) for w in
                                                  words[:cut]],
            "env": e, "gpus": gpus}


def configs(items, here):
    """torchrun_config.py's answer for each item (in one process: torch is
    imported once)."""
    if not items:
        return []
    p = subprocess.run(["timeout", "-k", "5", "120", "/usr/bin/python3",
                        os.path.join(here, "torchrun_config.py")],
                       input=json.dumps(items).encode(), capture_output=True)
    if p.returncode != 0:
        raise RuntimeError("torchrun_config.py exited %d: %s" % (
            p.returncode, p.stderr.decode(errors="replace")[-600:]))
    return json.loads(p.stdout)


class Plan:
    """A local torchrun: argv, env, the local world size expected, and the
    notes on what changed beyond the fixed rules."""

    def __init__(self, argv, env, nproc, notes):
        self.argv = argv
        self.env = env
        self.nproc = nproc
        self.notes = notes


def local_run(item, cfg, here):
    """A Plan that starts one node of the job here."""
    words = item["argv"]
    opts, script, _ = split(words)
    port = free_port()
    notes = []
    out = []
    for name, val, written in opts:
        if name in ("nnodes", "node_rank", "master_addr", "master_port",
                    "rdzv_endpoint", "log_dir", "monitor_interval"):
            continue
        if name == "nproc_per_node":
            out += ["--nproc_per_node", str(cfg["nproc"])]
            continue
        if name in ("module", "m", "run_path", "no_python", "start_method"):
            continue
        if name == "rdzv_backend" and str(val).startswith("etcd"):
            continue
        out += written
    if cfg["max_nodes"] > 1:
        notes.append("--nnodes %s forced to 1" % (
            cfg["min_nodes"] if cfg["min_nodes"] == cfg["max_nodes"] else
            "%d:%d" % (cfg["min_nodes"], cfg["max_nodes"])))
    out += ["--nnodes", "1", "--node_rank", "0", "--monitor_interval", "0.5"]
    if not cfg["standalone"]:
        out += ["--master_addr", "127.0.0.1", "--master_port", str(port)]
        if cfg["rdzv_backend"].startswith("etcd"):
            # No etcd server here: c10d's store stands in for one node.
            out += ["--rdzv_backend", "c10d"]
            notes.append("rendezvous %s: c10d stands in" % cfg["rdzv_backend"])
        if cfg["rdzv_backend"] != "static":
            out += ["--rdzv_endpoint", "127.0.0.1:%d" % port]
    out += ["--run_path", "--start_method", "fork",
            os.path.join(here, "torch_rank.py")]
    env = {k: v for k, v in item["env"].items()
           if k not in ("PYTHONHOME", "LD_PRELOAD") and not k.startswith(
               ("PET_", "TORCHELASTIC_"))}
    # Options torchrun reads from PET_*: the ones the line did not name
    # stay as the env gave them; the ones rewritten above win anyway.
    for k, v in item["env"].items():
        if k.startswith("PET_") and k not in (
                "PET_NNODES", "PET_NODE_RANK", "PET_MASTER_ADDR",
                "PET_MASTER_PORT", "PET_RDZV_ENDPOINT", "PET_NPROC_PER_NODE",
                "PET_LOG_DIR", "PET_MONITOR_INTERVAL") and not (
                k == "PET_RDZV_BACKEND" and v.startswith("etcd")):
            env[k] = v
    env["PET_NPROC_PER_NODE"] = str(cfg["nproc"])
    env["MASTER_ADDR"] = "127.0.0.1"
    env["MASTER_PORT"] = str(port)
    env["PATH"] = (env["PATH"] + ":" if env.get("PATH") else "") + \
        "/usr/bin:/bin"
    env.setdefault("HOME", "/root")
    if cfg.get("nproc_word") in ("auto", "gpu"):
        notes.append("nproc_per_node %s = %d GPUs" % (cfg["nproc_word"],
                                                      cfg["nproc"]))
    argv = ["/usr/bin/python3", os.path.join(here, "torchrun_shim.py"),
            item.get("entry", "run")] + out
    return Plan(argv, env, cfg["nproc"], notes)


class Result(ranks.Result):
    def error_lines(self, n=12):
        return [ln for ln in self.lines() if "OMP_NUM_THREADS" not in ln and
                not set(ln.strip()) <= {"*"}][-n:]


def run(plan, tmp, limit=90):
    out = tempfile.mkdtemp(dir=tmp, prefix="torch.")
    return ranks.launch(plan, tmp, out, limit, 5, Result, "torchrun")


def check(plan, res, claims):
    """Problems with a local torchrun: exit 0, nproc workers in one group
    of nproc, local world size nproc, every claimed variable in each."""
    if res.rc != 0:
        return ["torchrun exited %d" % res.rc]
    problems = []
    n = len(res.ranks)
    if n != plan.nproc:
        problems.append("%d workers printed, %d expected" % (n, plan.nproc))
    worlds = {r.get("world", "none") for r in res.ranks.values()}
    locs = {r.get("local_world", "none") for r in res.ranks.values()}
    if worlds != {str(plan.nproc)}:
        problems.append("process group world sizes %s" % sorted(worlds))
    if locs != {str(plan.nproc)}:
        problems.append("local world sizes %s" % sorted(locs))
    for name, value in sorted(claims.items()):
        bad = [r for r, d in sorted(res.ranks.items())
               if d["env"].get(name) != value]
        if bad:
            problems.append("%s is %r in worker %d, the container has %r" % (
                name, res.ranks[bad[0]]["env"].get(name), bad[0], value))
    return problems
