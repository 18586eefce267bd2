#!/usr/bin/python3
"""test/layout/links.py [ROOT]: every citation of a doc in the tree resolves.

A citation is a page of this repository's docs with a section (docs/,
then PAGE.md#section), or any page under docs/facts/ with or without
one, anywhere in the tree (code comments, the policy file, tests, docs);
or a Markdown link [text](PAGE.md#section) in a .md file, relative to
that file. (A docs/ path without a section, outside docs/facts/, is more
often an upstream repository's file, and is not checked.) The page
must exist and the section must be one of its headings, as GitHub makes
anchors of them: lower case, punctuation other than `-` and `_` dropped,
spaces turned into `-`, and `-1`, `-2` added to repeats. A link that
leaves the tree (http:, mailto:) or points at a file that is not
Markdown is not checked here.

Every source key (`[KRP]`) used on a page of docs/facts/, in
deploy/policy.yaml, in policy/table/, test/unit/cases/ or test/nodes/
must also have its entry in docs/facts/sources.md (a list item starting
with the key), unless the file that uses it defines it in place
(`[KEY] = owner/repo ...`, or the key followed by a URL).

With ROOT, that tree is checked instead of this one; without it, the
check also proves on a scratch tree that it fails on a broken anchor.
Exit 0 when all resolve, 1 when one does not (each printed as
`not ok - FILE:LINE: ...`).
"""
import os
import re
import subprocess
import sys
import tempfile

SKIP_DIRS = {".git", "build"}
CITE = re.compile(r"(?<![A-Za-z0-9_./-])docs/[A-Za-z0-9_/-]+(?:\.[A-Za-z0-9_-]+)*\.md(?:#[A-Za-z0-9_-]+)?")
MDLINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
KEY = re.compile(r"\[([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*)\]")


def slug(text):
    text = re.sub(r"`", "", text.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path in cache:
        return cache[path]
    seen, out, fenced = {}, set(), False
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    cache[path] = out
    return out


# The research notes beside the repo: a fact taken from them is cited
# from docs/facts/, which the repo carries. Fuzz inputs are frozen as
# found. Joined, so that this file does not cite it.
RESEARCH = "/".join(("shared", "research"))


def text_files(root):
    for d, dirs, files in os.walk(root):
        if d == root:
            dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        else:
            dirs[:] = [x for x in dirs if x != ".git"]
        for name in files:
            p = os.path.join(d, name)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                head = f.read(8192)
            if b"\0" not in head:
                yield p


def check(root):
    fails = 0
    root = os.path.abspath(root)

    def bad(path, n, msg):
        nonlocal fails
        print("not ok - %s:%d: %s" % (os.path.relpath(path, root), n, msg))
        fails += 1

    def resolve(path, n, target, cited):
        page, _, section = target.partition("#")
        if not os.path.isfile(page):
            bad(path, n, "%s: no such page" % cited)
        elif section and section not in anchors(page):
            bad(path, n, "%s: no heading makes #%s" % (cited, section))

    count = 0
    for path in text_files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        is_md = path.endswith(".md")
        frozen = os.path.relpath(path, root).startswith("test/fuzz/")
        for n, line in enumerate(lines, 1):
            if RESEARCH in line and not frozen:
                bad(path, n, "cites %s, which is not in the repo: cite the "
                    "fact's page in docs/facts/" % RESEARCH)
            for m in CITE.finditer(line):
                c = m.group(0)
                if "#" not in c and not c.startswith("docs/facts/"):
                    continue
                count += 1
                resolve(path, n, os.path.join(root, m.group(0)), m.group(0))
            if not is_md:
                continue
            for m in MDLINK.finditer(line):
                t = m.group(1)
                if re.match(r"^[a-z]+:", t):
                    continue
                page = t.partition("#")[0]
                if page and not page.endswith(".md"):
                    continue
                count += 1
                base = path if not page else os.path.join(os.path.dirname(path), page)
                resolve(path, n, base + ("#" + t.partition("#")[2] if "#" in t else ""), t)

    facts = os.path.join(root, "docs", "facts")
    sources = os.path.join(facts, "sources.md")
    if os.path.isdir(facts):
        defined = set()
        if os.path.isfile(sources):
            with open(sources, encoding="utf-8") as f:
                for line in f:
                    m = re.match(r"^- ((?:\[[A-Z0-9-]+\](?:, )?)+)", line)
                    if m:
                        defined.update(KEY.findall(m.group(1)))
        for name in sorted(os.listdir(facts)):
            p = os.path.join(facts, name)
            if not name.endswith(".md") or p == sources:
                continue
            with open(p, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    for k in KEY.findall(line):
                        count += 1
                        if k not in defined:
                            bad(p, n, "[%s] has no entry in docs/facts/sources.md" % k)
        for p in table_files(root):
            with open(p, encoding="utf-8") as f:
                text = f.read()
            for n, line in enumerate(text.splitlines(), 1):
                for k in KEY.findall(line):
                    count += 1
                    if k not in defined and not defined_in_place(text, k):
                        bad(p, n, "[%s] has no entry in docs/facts/sources.md "
                            "and no source where it is used" % k)
    return fails, count


def table_files(root):
    """The files whose source keys must resolve: the policy file, the C
    tables, the data-file test cases and the test clusters."""
    for rel in ("deploy/policy.yaml", "policy/table",
                "test/unit/cases", "test/nodes"):
        p = os.path.join(root, rel)
        if os.path.isfile(p):
            yield p
        elif os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                if name.endswith((".c", ".h", ".json", ".yaml")):
                    yield os.path.join(p, name)


def defined_in_place(text, key):
    """A key the file defines itself: `[KEY] = owner/repo ...`, or `[KEY]`
    followed (on its comment's next line, maybe) by a URL."""
    return re.search(r"\[%s\](?:\s*=\s*[A-Za-z0-9_.-]+/|\s*(?:\n\s*#)?\s*https?://)"
                     % re.escape(key), text) is not None


def self_test(script):
    page = "/".join(("docs", "facts", "a.md"))  # not a citation of this tree
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "docs", "facts"))
        with open(os.path.join(tmp, "docs", "facts", "a.md"), "w") as f:
            f.write("# A\n\n## Trainer v2\n\nA fact [K1].\n")
        with open(os.path.join(tmp, "docs", "facts", "sources.md"), "w") as f:
            f.write("# Sources\n\n- [K1] some/repo `path`\n")
        with open(os.path.join(tmp, "x.c"), "w") as f:
            f.write("/* %s#trainer-v2 */\n" % page)
        out = subprocess.run([sys.executable, script, tmp],
                             capture_output=True, text=True)
        if out.returncode != 0:
            return "a tree whose citations resolve failed:\n" + out.stdout
        with open(os.path.join(tmp, "x.c"), "a") as f:
            f.write("/* %s#trainer-v3 */\n" % page)
            f.write("/* %s/x.md 1.2 */\n" % RESEARCH)
        with open(os.path.join(tmp, "docs", "facts", "a.md"), "a") as f:
            f.write("Another [K2].\n")
        os.makedirs(os.path.join(tmp, "deploy"))
        with open(os.path.join(tmp, "deploy", "policy.yaml"), "w") as f:
            f.write("# [K1][K3], and [K4] = some/repo path\n")
        out = subprocess.run([sys.executable, script, tmp],
                             capture_output=True, text=True)
        if out.returncode == 0 or "x.c:2: %s#trainer-v3" % page not in out.stdout:
            return "a broken anchor went unnoticed:\n" + out.stdout
        if "x.c:3: cites" not in out.stdout:
            return "a citation of the research notes went unnoticed:\n" + out.stdout
        if "[K2] has no entry" not in out.stdout:
            return "a key without a source went unnoticed:\n" + out.stdout
        if "policy.yaml:1: [K3]" not in out.stdout or "[K4]" in out.stdout:
            return "a policy key went unnoticed or was refused:\n" + out.stdout
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")
    fails, count = check(root)
    if fails:
        print("not ok - links: %d of %d citations do not resolve" % (fails, count))
        return 1
    if len(sys.argv) > 1:
        return 0
    err = self_test(os.path.abspath(__file__))
    if err:
        print("not ok - links: " + err)
        return 1
    print("ok - links: %d doc citations and source keys resolve" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
