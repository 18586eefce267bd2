#!/usr/bin/python3
"""Every metric the chart's Grafana dashboard and PrometheusRule name is
one that `topogate serve` exports.

    metrics_named.py RENDERED.yaml METRICS.txt

RENDERED.yaml: the chart rendered with both on (test/chart/values/
monitoring.yaml); METRICS.txt: /metrics of a running `serve
--live-audit`. A name is each topogate_* word of a dashboard target's
expression, of a rule's expr and of its annotations; it exists when
METRICS.txt has a "# TYPE NAME" line (a histogram's _bucket, _sum and
_count count as its family). Prints one line per name; exit 1 when a
name is not exported, or when the dashboard or the rules name none.
"""
import json
import re
import sys

import yaml

NAME = re.compile(r"\btopogate_[a-z0-9_]+")
shape_bad = False


def names_in(text):
    return set(NAME.findall(text or ""))


def main():
    objs = [o for o in yaml.safe_load_all(open(sys.argv[1])) if o]
    families = set(re.findall(r"^# TYPE (\S+) ", open(sys.argv[2]).read(),
                              re.M))
    where = {}
    global shape_bad
    for o in objs:
        if o.get("kind") == "PrometheusRule":
            # The operator's shape (monitoring.coreos.com/v1): groups of
            # a name and rules, each an alert with an expr.
            if o.get("apiVersion") != "monitoring.coreos.com/v1" or any(
                    not g.get("name") or not g.get("rules") or any(
                        not r.get("alert") or not r.get("expr")
                        for r in g["rules"])
                    for g in o["spec"]["groups"]):
                print("FAIL PrometheusRule: not groups of named rules with "
                      "alert and expr")
                shape_bad = True
            for g in o["spec"]["groups"]:
                for r in g["rules"]:
                    text = r.get("expr", "") + " " + " ".join(
                        (r.get("annotations") or {}).values())
                    for n in names_in(text):
                        where.setdefault(n, set()).add("rule " + r["alert"])
        if o.get("kind") == "ConfigMap":
            for key, text in (o.get("data") or {}).items():
                if not key.endswith(".json"):
                    continue
                dash = json.loads(text)
                for p in dash.get("panels", []):
                    for t in p.get("targets", []):
                        for n in names_in(t.get("expr")):
                            where.setdefault(n, set()).add(
                                "panel " + p["title"])
    rules = {n for n, w in where.items() if any(x.startswith("rule ")
                                                 for x in w)}
    panels = {n for n, w in where.items() if any(x.startswith("panel ")
                                                  for x in w)}
    bad = 1 if shape_bad else 0
    if not rules or not panels:
        print("FAIL the rendering has %d rule metrics and %d dashboard "
              "metrics: both must name some" % (len(rules), len(panels)))
        bad += 1
    for n in sorted(where):
        base = re.sub(r"_(bucket|sum|count)$", "", n)
        if n in families or base in families:
            print("ok   %s (%s)" % (n, ", ".join(sorted(where[n]))))
        else:
            print("FAIL %s is not exported (named by %s)" %
                  (n, ", ".join(sorted(where[n]))))
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
