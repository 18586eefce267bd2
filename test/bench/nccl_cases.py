"""The cases of test/bench/nccl_run.py: what each one stands for.

A case is a layout of ranks (one per GPU) into pods, the namespaces those
pods get, and the NCCL environment. Pods are emulated on one host:

- layout "group": one pod holding every GPU (a whole-node pod, torchrun
  with --nproc_per_node = GPUs): every rank sees every GPU.
- layout "split": one pod per GPU: each rank sees only its own GPU
  (CUDA_VISIBLE_DEVICES) and NCCL_P2P_DISABLE=1 stands in for the device
  nodes a real pod lacks (as in docs/facts/nccl-efa-shm.md#measured-split-cost).
- shm (what /dev/shm is, from each rank's side):
  "host"         the host's /dev/shm, as hostIPC gives a pod that mounts
                 nothing at /dev/shm (containerd CRI, linuxContainerMounts in
                 containerd/containerd internal/cri/server/container_create.go:
                 under hostIPC the host's /dev/shm is bind-mounted unless
                 the pod mounts its own);
  "shared:SIZE"  one private tmpfs of SIZE for all ranks (unshare --mount,
                 then mount -t tmpfs -o size=SIZE): the host's /dev/shm,
                 limited to SIZE;
  "pod:SIZE"     a tmpfs of SIZE per pod (a memory emptyDir at /dev/shm, or
                 the runtime's 64 MiB default), in the host's IPC namespace;
  "private:SIZE" as pod:SIZE, and the pod's own IPC namespace too
                 (unshare --ipc --mount): a pod without hostIPC.
- hostname: "host" (one hostname for all ranks, as inside one pod) or "pod"
  (unshare --uts, hostname pod-N per pod, as the kubelet names each pod's
  host after the pod: GeneratePodHostNameAndDomain, kubernetes/kubernetes
  pkg/kubelet/kubelet_pods.go).

Why those two matter: NCCL uses SHM or P2P between two ranks only when
their hostHash (hash of hostname + /proc/sys/kernel/random/boot_id, or
NCCL_HOSTID) and their shmDev (st_dev of /dev/shm) are equal
(NVIDIA/nccl src/misc/utils.cc getHostHashOnce, src/init.cc fillInfo,
src/transport/shm.cc shmCanConnect, src/graph/paths.cc ncclTopoCheckP2p);
otherwise it goes to the network (NET/Socket here).

Not emulated: every rank shares the host's network namespace (pods have
their own), and NCCL passes cuMem handles over abstract Unix sockets
(src/misc/ipcsocket.cc), which are per network namespace.

`expect` is what that source says should happen; the run records what did.
"""

MIB = 1 << 20
DEFAULT_SHM = 64 * MIB  # the container runtime's /dev/shm (runc/containerd default)

P2P_OFF = {"NCCL_P2P_DISABLE": "1"}


def case(name, experiment, layout, shm, hostname, env, expect, stands_for):
    return {
        "name": name, "experiment": experiment, "layout": layout, "shm": shm,
        "hostname": hostname, "env": dict(env), "expect": expect,
        "stands_for": stands_for,
    }


def all_cases(topogate_shm):
    """The four experiments of issue 48. topogate_shm: the /dev/shm size
    topogate sets for the host measured (bytes)."""
    t = f"{topogate_shm}"
    cs = []
    # 1. NCCL_P2P_LEVEL in one process group over all GPUs. Path types
    # (src/include/graph.h): LOC 0 < NVL 1 < ... < PIX 4 < PXB 5; P2P is
    # used when the path's type <= the level (src/graph/paths.cc), so on
    # NVLink NVL and PIX change nothing and LOC turns P2P off.
    for level in (None, "NVL", "PIX", "LOC"):
        env = {} if level is None else {"NCCL_P2P_LEVEL": level}
        cs.append(case(
            f"p2p-level-{(level or 'unset').lower()}", "1 NCCL_P2P_LEVEL", "group",
            "host", "host", env,
            "SHM (P2P off)" if level == "LOC" else "P2P over NVLink",
            "one whole-node pod, NCCL_P2P_LEVEL " + (level or "unset")))
    # 2. /dev/shm size for split layouts that use SHM. NCCL >= 2.24 puts
    # SHM buffers in cuMem host memory when the driver is CUDA >= 12.6
    # (src/misc/cudawrap.cc ncclCuMemHostEnable; src/transport/shm.cc
    # ncclShmAllocateShareableBuffer), and in /dev/shm files otherwise or
    # with NCCL_CUMEM_HOST_ENABLE=0: both are measured.
    for label, shm in (("64mi", f"shared:{DEFAULT_SHM}"), ("topogate", f"shared:{t}"),
                       ("unlimited", "host")):
        for alloc, extra in (("cumem", {}), ("legacy", {"NCCL_CUMEM_HOST_ENABLE": "0"})):
            cs.append(case(
                f"shm-{label}-{alloc}", "2 /dev/shm size", "split", shm, "host",
                {**P2P_OFF, **extra},
                "SHM" + ("; may fail at 64 MiB" if alloc == "legacy" and label == "64mi" else ""),
                f"1-GPU pods sharing one /dev/shm ({label}), "
                + ("cuMem host buffers" if alloc == "cumem" else "/dev/shm files")))
    # 3. hostIPC between separate processes, and for one pod.
    cs += [
        case("ipc-split-shared", "3 hostIPC", "split", "host", "host", P2P_OFF, "SHM",
             "1-GPU pods sharing IPC and hostname (the earlier measurement's model)"),
        case("ipc-split-shm-disable", "3 hostIPC", "split", "host", "host",
             {**P2P_OFF, "NCCL_SHM_DISABLE": "1"}, "NET/Socket",
             "1-GPU pods without hostIPC, by NCCL_SHM_DISABLE=1 (earlier model)"),
        case("ipc-split-private", "3 hostIPC", "split", f"private:{DEFAULT_SHM}", "host",
             P2P_OFF, "NET/Socket (shmDev differs)",
             "1-GPU pods without hostIPC: own IPC namespace and 64 MiB /dev/shm"),
        case("ipc-split-hostipc-podnames", "3 hostIPC", "split", "host", "pod", P2P_OFF,
             "NET/Socket (hostHash differs)",
             "1-GPU pods with hostIPC and their own hostnames, as the kubelet names them"),
        case("ipc-split-hostipc-hostid", "3 hostIPC", "split", "host", "pod",
             {**P2P_OFF, "NCCL_HOSTID": "node-0"}, "SHM",
             "as above, with one NCCL_HOSTID for all pods"),
        case("ipc-split-hostipc-emptydir", "3 hostIPC", "split", f"pod:{t}", "pod",
             {**P2P_OFF, "NCCL_HOSTID": "node-0"}, "NET/Socket (shmDev differs)",
             "1-GPU pods with hostIPC and a memory emptyDir at /dev/shm (topogate's patch)"),
        case("ipc-group-host", "3 hostIPC", "group", "host", "host", {}, "P2P over NVLink",
             "one whole-node pod in the host's IPC namespace"),
        case("ipc-group-private", "3 hostIPC", "group", f"private:{t}", "pod", {},
             "P2P over NVLink",
             "one whole-node pod in its own IPC namespace, emptyDir /dev/shm"),
    ]
    return cs


def shm_parts(shm):
    """'pod:67108864' -> ('pod', 67108864); 'host' -> ('host', None)."""
    if shm == "host":
        return "host", None
    scope, _, size = shm.partition(":")
    if scope not in ("shared", "pod", "private") or not size.isdigit():
        raise ValueError(f"bad shm model {shm!r}")
    return scope, int(size)


def needs_namespaces(c):
    return c["shm"] != "host" or c["hostname"] == "pod"


def distinct_host_hashes(c):
    """Pods that NCCL sees as different hosts: the only split layout that
    NCCL lets share one GPU (src/init.cc refuses two ranks of one host on
    one GPU: 'Duplicate GPU detected')."""
    return c["hostname"] == "pod" and "NCCL_HOSTID" not in c["env"]
