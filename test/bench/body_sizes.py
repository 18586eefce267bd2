#!/usr/bin/env python3
"""body_sizes.py REVIEW OUT_DIR SIZE_KIB...: the AdmissionReview REVIEW
(the 6 KB p4d-training.json of ../shared/bench/fixtures) grown to each
size (KiB: the file has at least that many bytes) by copies of its last
container (a log shipper, no GPU), each under a name of its own, so that
every size is the same pod with more of the same text: what a review
costs per KB shows without a change of shape. One file per size,
OUT_DIR/body-<size>k.json, compact JSON as the apiserver sends it.
Deterministic: the same input gives the same bytes."""
import copy
import json
import os
import sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    review = json.load(open(src))
    pod = review["request"]["object"]
    base = pod["spec"]["containers"]
    sidecar = base[-1]
    os.makedirs(out, exist_ok=True)
    for arg in sys.argv[3:]:
        want = int(arg) * 1024
        n = 0
        while True:
            extra = []
            for i in range(n):
                c = copy.deepcopy(sidecar)
                c["name"] = "%s-%04d" % (sidecar["name"], i)
                extra.append(c)
            pod["spec"]["containers"] = base + extra
            text = json.dumps(review, separators=(",", ":"))
            if len(text) >= want:
                break
            # Step by what one sidecar adds, less a little, so as not to overshoot far.
            per = max(1, len(json.dumps(sidecar, separators=(",", ":"))))
            n += max(1, (want - len(text)) // per)
        path = os.path.join(out, "body-%dk.json" % int(arg))
        with open(path, "w") as f:
            f.write(text)
        print("%s %d bytes, %d copies" % (path, len(text), n))


if __name__ == "__main__":
    main()
