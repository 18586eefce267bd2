#!/usr/bin/env python3
"""shuffle_env.py [--value-from] REVIEW OUT: REVIEW's pod, its text redone.

Each managedFields entry's fieldsV1 lists its members in another order,
and the containers' env entries are written anew:
- by default, as many entries as before, with new random names and values
  of random lengths: the same structure, other strings, so a review takes
  the same code paths and its string scans branch other ways;
- with --value-from, half as many entries, each a valueFrom.fieldRef:
  about the same bytes and cJSON nodes as before in another structure,
  so the parse's dispatch goes other ways too.
The bench's large twin bodies (issue 15's twenty-first round): a review
of REVIEW right after one of a twin has not been taught REVIEW's own
strings, or with --value-from its structure either.
"""
import json
import random
import sys

NAME = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_"
VALUE = "abcdefghijklmnopqrstuvwxyz0123456789-./"


def word(rng, letters, lo, hi):
    return "".join(rng.choice(letters) for _ in range(rng.randint(lo, hi)))


def plain_entries(rng, n):
    return [{"name": word(rng, NAME, 6, 30), "value": word(rng, VALUE, 1, 60)}
            for _ in range(n)]


def value_from_entries(rng, n):
    return [{"name": word(rng, NAME, 6, 30),
             "valueFrom": {"fieldRef": {
                 "apiVersion": "v1",
                 "fieldPath": "metadata.annotations['%s']" % word(rng, VALUE, 4, 40)}}}
            for _ in range((n + 1) // 2)]


def main():
    args = sys.argv[1:]
    value_from = args[:1] == ["--value-from"]
    if value_from:
        args = args[1:]
    rng = random.Random(7)
    review = json.load(open(args[0]))
    pod = review["request"]["object"]
    for c in pod["spec"].get("containers", []):
        n = len(c.get("env", []))
        c["env"] = value_from_entries(rng, n) if value_from else plain_entries(rng, n)
    for entry in pod["metadata"].get("managedFields", []):
        members = list(entry.get("fieldsV1", {}).items())
        rng.shuffle(members)
        entry["fieldsV1"] = dict(members)
    review["request"]["uid"] = "00000000-0000-4000-8000-000000000007"
    with open(args[1], "w") as out:
        json.dump(review, out, separators=(",", ":"))


if __name__ == "__main__":
    main()
