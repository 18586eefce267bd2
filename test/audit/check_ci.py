#!/usr/bin/python3
"""check_ci.py: `topogate audit -o sarif` and `-o junit` read as their
consumers read them.

    check_ci.py sarif SCHEMA FILE [--baseline-state new|unchanged|mixed]
    check_ci.py junit FILE SARIF
    check_ci.py ids FILE...

sarif: FILE validates against the SARIF 2.1.0 JSON schema (draft 4, as
the schema says); each result's fingerprint is the id recomputed here
from the fields docs/audit.md names (64-bit FNV-1a, written again in
Python, not taken from the C); ids are unique; ruleIndex points at the
rule of ruleId. --baseline-state: every result carries that
baselineState ("mixed": both kinds occur, and only those two).

junit: FILE (already checked with xmllint against JUnit.xsd) names each
of SARIF's findings exactly once, by id, in a <failure> or in a suite's
<system-out>; the counts of each suite agree with its cases.

ids: prints the sorted ids of SARIF files, one a line.
Prints 'ok - ...' / 'not ok - ...' lines; exit 1 when one failed.
"""
import json
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET

import jsonschema

FAILED = 0


def ok(name):
    print("ok - " + name)


def not_ok(name, why):
    global FAILED
    FAILED += 1
    print("not ok - %s: %s" % (name, why))


def fnv1a(h, data):
    """64-bit FNV-1a: xor the byte in, then multiply by the prime."""
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def fnv1a_fields(h, fields):
    """Each field hashed with a NUL after it."""
    for field in fields:
        h = fnv1a(h, field.encode("utf-8") + b"\0")
    return h


# The published test vectors of 64-bit FNV-1a ("a", "foobar"): this
# oracle is FNV-1a, not something like it.
assert fnv1a(0xCBF29CE484222325, b"a") == 0xAF63DC4C8601EC8C
assert fnv1a(0xCBF29CE484222325, b"foobar") == 0x85944171F73967E8


def expected_id(result):
    p = result["properties"]
    loc = result.get("locations")
    # The key has the path as given; the URI has it percent-encoded.
    path = (urllib.parse.unquote(
        loc[0]["physicalLocation"]["artifactLocation"]["uri"]) if loc else "-")
    key = fnv1a_fields(0xCBF29CE484222325, [
        "topogate-finding-v1", path, result["ruleId"], p["apiGroup"],
        p["kind"], p["namespace"], p["name"], p["part"], p["finding"]])
    return "%016x" % fnv1a_fields(key, [str(p["occurrence"])])


def results_of(path):
    with open(path) as f:
        return json.load(f)["runs"][0]["results"]


def check_sarif(schema_path, path, state):
    with open(schema_path) as f:
        schema = json.load(f)
    with open(path) as f:
        doc = json.load(f)
    errors = sorted(jsonschema.Draft4Validator(
        schema, format_checker=jsonschema.FormatChecker()).iter_errors(doc),
        key=lambda e: list(e.path))
    if errors:
        not_ok(path + ": SARIF 2.1.0 schema", "; ".join(
            "%s at %s" % (e.message[:120], "/".join(map(str, e.path)))
            for e in errors[:3]))
    else:
        ok(path + ": SARIF 2.1.0 schema")
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids, bad, states = set(), [], set()
    for r in run["results"]:
        fp = r["partialFingerprints"]["topogateFindingId/v1"]
        if fp != expected_id(r):
            bad.append("%s != %s" % (fp, expected_id(r)))
        if fp in ids:
            bad.append("%s twice" % fp)
        ids.add(fp)
        if rules[r["ruleIndex"]]["id"] != r["ruleId"]:
            bad.append("ruleIndex %d is not %s" % (r["ruleIndex"], r["ruleId"]))
        states.add(r.get("baselineState"))
    if bad:
        not_ok(path + ": ids recomputed, unique; rule indexes", "; ".join(bad[:5]))
    else:
        ok("%s: %d ids recomputed, unique; rule indexes" % (path, len(ids)))
    if state:
        want = {"new", "unchanged"} if state == "mixed" else {state}
        if states == want:
            ok("%s: baselineState %s" % (path, state))
        else:
            not_ok(path + ": baselineState", "want %s, got %s" % (want, states))


ID_LINE = re.compile(r"^([0-9a-f]{16}) (deny|warn|mistake|unreadable) line ")


def check_junit(path, sarif):
    tree = ET.parse(path)
    named, bad = [], []
    for suite in tree.getroot().iter("testsuite"):
        cases = suite.findall("testcase")
        failures = sum(1 for c in cases if c.find("failure") is not None)
        skipped = sum(1 for c in cases if c.find("skipped") is not None)
        if (int(suite.get("tests")), int(suite.get("failures")),
                int(suite.get("skipped"))) != (len(cases), failures, skipped):
            bad.append("%s: counts" % suite.get("name"))
        texts = [c.find("failure").text for c in cases
                 if c.find("failure") is not None]
        texts.append(suite.find("system-out").text or "")
        for text in texts:
            for line in (text or "").splitlines():
                m = ID_LINE.match(line)
                if m:
                    named.append(m.group(1))
                elif line:
                    bad.append("not a finding line: " + line[:60])
    want = sorted(r["partialFingerprints"]["topogateFindingId/v1"]
                  for r in results_of(sarif))
    if sorted(named) != want:
        bad.append("ids %d named, %d in the SARIF report" % (len(named), len(want)))
    if bad:
        not_ok(path + ": every finding once, counts agree", "; ".join(bad[:5]))
    else:
        ok("%s: %d findings once each, counts agree" % (path, len(named)))


def main(argv):
    if len(argv) >= 3 and argv[0] == "sarif":
        state = None
        if len(argv) == 5 and argv[3] == "--baseline-state":
            state = argv[4]
        check_sarif(argv[1], argv[2], state)
    elif len(argv) == 3 and argv[0] == "junit":
        check_junit(argv[1], argv[2])
    elif len(argv) >= 2 and argv[0] == "ids":
        for i in sorted(fp for p in argv[1:] for fp in (
                r["partialFingerprints"]["topogateFindingId/v1"]
                for r in results_of(p))):
            print(i)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
