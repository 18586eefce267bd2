#!/usr/bin/env python3
"""The table of one manycore-turns.sh or manycore-together.sh run.

    turns_table.py TURNS_TXT [DUR]

Reads what build/benchbundle/turns.sh or together.sh wrote
($OUT/turns.txt, $OUT/together.txt) and prints a markdown table: per
server, the median over rounds of its CPU per review kept alive and at
the open-loop rate, its reviews/s kept alive (DUR: the seconds of each
test, from the file's first line when it has one, 6 when not), the
medians of its latency percentiles at that rate, the kept-alive figures
under Go's client where the run had them (together.sh's TESTS=go), and
each figure's ratio to nginx's when nginx ran: the ratio of the
medians, then ("paired") the median of each round's own ratio, the
figure for servers that ran at the same moments (together.sh). Then how
many turns the CPU's pace changed in ("pace" lines: pace() in
manycore-servers.sh), since a turn whose pace changed ran partly at
the other one.
"""
import re
import statistics
import sys

# A turn whose pace before and after differ by more than this changed pace:
# the device's two paces are about 1.5x apart, the noise within one 5 %.
PACE_CHANGE = 1.25


def read(path):
    """Per (server, test): lists of CPU µs, reviews and latencies; paces."""
    runs, paces, header = {}, {}, {}
    for line in open(path):
        f = line.split()
        if line.startswith(("# turns", "# together")):
            header = dict(kv.split("=", 1) for kv in f[2:] if "=" in kv)
            continue
        if len(f) < 4 or not f[0].startswith("r"):
            continue
        if f[1] == "pace" and len(f) >= 6 and f[4].isdigit():
            paces.setdefault((f[0], f[2]), {})[f[3]] = int(f[4])
            continue
        m = re.match(r"(\d+) reviews +([\d.]+) us CPU a review",
                     " ".join(f[3:]))
        if f[1] not in ("ka", "1k", "go") or m is None:
            continue
        run = runs.setdefault((f[2], f[1]),
                              {"cpu": [], "n": [], "lat": [], "round": {}})
        run["cpu"].append(float(m.group(2)))
        run["round"][f[0]] = float(m.group(2))
        run["n"].append(int(m.group(1)))
        lat = re.search(r"p50 (\d+) p99 (\d+) p99\.9 (\d+) us", line)
        if lat:
            run["lat"].append(tuple(int(x) for x in lat.groups()))
    return runs, paces, header


def cell(fmt, value, floor, paired=None):
    """value as fmt, with its ratio to nginx's (floor) when nginx ran, and
    the median of the rounds' own ratios (paired) when given."""
    if not floor:
        return fmt % value
    if paired is None:
        return fmt % value + " (%.2f×)" % (value / floor)
    return fmt % value + " (%.2f×; paired %.2f×)" % (value / floor, paired)


def paired_ratio(run, floor):
    """The median over the rounds both ran of run's CPU over floor's."""
    rounds = sorted(set(run["round"]) & set(floor["round"]))
    if not rounds:
        return None
    return statistics.median(run["round"][r] / floor["round"][r]
                             for r in rounds)


def median_latency(lats):
    return tuple(statistics.median(p[i] for p in lats) for i in range(3))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: turns_table.py TURNS_TXT [DUR]")
    runs, paces, header = read(sys.argv[1])
    if not runs:
        sys.exit("%s: no turns in it" % sys.argv[1])
    dur = float(sys.argv[2] if len(sys.argv) > 2 else header.get("DUR", 6))
    rate = header.get("RATE", "1000")
    servers = sorted({s for s, _ in runs}, key=lambda s: (s == "nginx", s))

    def paired(server, test):
        floor = runs.get(("nginx", test))
        if floor is None or server == "nginx":
            return None
        return paired_ratio(runs[server, test], floor)

    med = {k: statistics.median(v["cpu"]) for k, v in runs.items()}
    reviews = {k: statistics.median(v["n"]) / dur for k, v in runs.items()}
    go_ran = any(test == "go" for _, test in runs)
    print("| server | rounds | CPU µs a review kept alive "
          "| reviews/s kept alive | CPU µs a review at %s/s "
          "| p50 / p99 / p99.9 µs at %s/s |" % (rate, rate) +
          (" CPU µs a review, Go's client | reviews/s, Go's client |"
           if go_ran else ""))
    print("|---|---|---|---|---|---|" + ("---|---|" if go_ran else ""))

    def kept_alive(server, test):
        """CPU a review and reviews/s under a kept-alive load (ka, go)."""
        if (server, test) not in runs:
            return ["", ""]
        return [cell("%.1f", med[server, test], med.get(("nginx", test)),
                     paired(server, test)),
                cell("%.0f", reviews[server, test],
                     reviews.get(("nginx", test)))]

    for s in servers:
        ka, open_loop = runs.get((s, "ka")), runs.get((s, "1k"))
        go = runs.get((s, "go"))
        cells = [s, str(len((ka or open_loop or go)["cpu"]))]
        cells += kept_alive(s, "ka")
        if open_loop:
            cells.append(cell("%.1f", med[s, "1k"], med.get(("nginx", "1k")),
                              paired(s, "1k")))
            lat = open_loop["lat"] and median_latency(open_loop["lat"])
            cells.append("%.0f / %.0f / %.0f" % lat if lat else "")
        else:
            cells += ["", ""]
        if go_ran:
            cells += kept_alive(s, "go")
        print("| " + " | ".join(cells) + " |")
    bracketed = [p for p in paces.values() if "before" in p and "after" in p]
    changed = sum(1 for p in bracketed
                  if max(p.values()) > PACE_CHANGE * min(p.values()))
    print()
    print("Medians over rounds; (×) = ratio to nginx. " +
          ("CPU pace measured around %d turns: it changed within %d of them."
           % (len(bracketed), changed) if bracketed else "No pace measured."))


if __name__ == "__main__":
    main()
