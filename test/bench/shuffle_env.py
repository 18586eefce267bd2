#!/usr/bin/env python3
"""shuffle_env.py REVIEW OUT: REVIEW's pod with other text of its shape.

Each container keeps its number of env entries, but their names and values
are new random strings of random lengths, and each managedFields entry's
fieldsV1 lists its members in another order. The bench's second large body
(issue 15's twenty-first round): a review of it takes the same code paths
as one of REVIEW, but its branches go another way, so a review of REVIEW
right after one of it has not been taught REVIEW's own branches.
"""
import json
import random
import sys

NAME = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_"
VALUE = "abcdefghijklmnopqrstuvwxyz0123456789-./"


def word(rng, letters, lo, hi):
    return "".join(rng.choice(letters) for _ in range(rng.randint(lo, hi)))


def main():
    rng = random.Random(7)
    review = json.load(open(sys.argv[1]))
    pod = review["request"]["object"]
    for c in pod["spec"].get("containers", []):
        c["env"] = [{"name": word(rng, NAME, 6, 30),
                     "value": word(rng, VALUE, 1, 60)}
                    for _ in c.get("env", [])]
    for entry in pod["metadata"].get("managedFields", []):
        members = list(entry.get("fieldsV1", {}).items())
        rng.shuffle(members)
        entry["fieldsV1"] = dict(members)
    review["request"]["uid"] = "00000000-0000-4000-8000-000000000007"
    with open(sys.argv[2], "w") as out:
        json.dump(review, out, separators=(",", ":"))


if __name__ == "__main__":
    main()
