"""Finding the launcher in a container's command line, for test/runtimes.

A container runs `mpirun ...` or `torchrun ...` directly, or a shell
script (`bash -c SCRIPT`) with such a line in it. find_launches() returns
each launcher invocation with its words expanded the way the shell would
expand them in that container: `$VAR`, `${VAR}`, `${VAR:-default}` from
the container's env and the script's own simple assignments, and `$((...))`
over known numbers. Nothing from a script is executed: a word that needs
a command substitution stays unresolved (an Unresolved), and the caller
decides what that word may be replaced by. One idiom is read because real
launchers use it to build their `-x` list (GKE's and NVIDIA's NCCL test
JobSets):  ENV_VARS=$(echo ${!NCCL*} ${!OMPI*} PATH | sed 's/ / -x /g').
"""

import ast
import operator
import os
import re
import shlex

MPI_NAMES = ("mpirun", "mpiexec", "orterun")
SHELLS = ("sh", "bash", "dash", "ash", "zsh")
TORCH_MODULES = {"torch.distributed.run": "run",
                 "torch.distributed.launch": "launch"}
NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# Words that may stand before the command in a simple command.
PREFIX_WORDS = ("then", "do", "else", "exec", "time", "nohup", "command",
                "{", "(", "!", "if", "while", "until")


class Unresolved(str):
    """A word the harness could not expand (the text as written)."""


class Launch:
    """One launcher invocation: kind is "mpi" or "torch"; words are the
    arguments after the launcher itself (expanded; an Unresolved where not);
    torch_entry is "run" (torchrun, python -m torch.distributed.run) or
    "launch" (python -m torch.distributed.launch); where says where it
    was found ("command" or "script line N")."""

    def __init__(self, kind, words, where, torch_entry="run", raw=None):
        self.kind = kind
        self.words = words
        self.where = where
        self.torch_entry = torch_entry
        self.raw = raw
        self.env_add = {}


def base(word):
    return os.path.basename(str(word))


def _python_module(words):
    """(entry, rest) when words start a `python -m torch.distributed.X`."""
    if not words or not re.match(r"^python(\d(\.\d+)?)?$", base(words[0])):
        return None
    i = 1
    while i < len(words) and words[i].startswith("-") and words[i] != "-m":
        i += 1  # python's own flags (-u, -O, ...)
    if i + 1 < len(words) and words[i] == "-m" and \
            words[i + 1] in TORCH_MODULES:
        return TORCH_MODULES[words[i + 1]], words[i + 2:]
    return None


def classify(words):
    """A Launch for words that start a launcher, else None. The program
    mpirun starts is part of its words: torchrun under mpirun is found by
    the caller in the program part."""
    if not words:
        return None
    b = base(words[0])
    if b in MPI_NAMES:
        return Launch("mpi", list(words[1:]), "command")
    if b == "torchrun":
        return Launch("torch", list(words[1:]), "command")
    pm = _python_module(words)
    if pm:
        return Launch("torch", list(pm[1]), "command", torch_entry=pm[0])
    return None


# --- expansion ---------------------------------------------------------------

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv,
        ast.Mod: operator.mod}


def _arith(expr, env):
    """$((expr)) over known integers, or None."""
    def sub(m):
        v = env.get(m.group(1) or m.group(2) or m.group(3))
        return v if v is not None and re.fullmatch(r"-?\d+", v) else "x"
    e = re.sub(r"\$\{(%s)\}|\$(%s)|\b(%s)\b" % (NAME, NAME, NAME), sub, expr)
    if not re.fullmatch(r"[\d\s+\-*/%()]*", e):
        return None

    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.BinOp) and type(n.op) in _OPS:
            return _OPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        raise ValueError("not arithmetic")
    try:
        return str(ev(ast.parse(e.replace("/", "//"), mode="eval")))
    except (ValueError, SyntaxError, ZeroDivisionError):
        return None


def expand(word, env):
    """The word with its parameter expansions done, or an Unresolved."""
    if "`" in word:
        return Unresolved(word)
    out = []
    i = 0
    while i < len(word):
        if word.startswith("$((", i):
            j = word.find("))", i)
            if j < 0:
                return Unresolved(word)
            v = _arith(word[i + 3:j], env)
            if v is None:
                return Unresolved(word)
            out.append(v)
            i = j + 2
            continue
        if word.startswith("$(", i):
            return Unresolved(word)
        m = re.compile(r"\$\{(%s)(:?[-=])?([^}]*)\}|\$(%s)" % (NAME, NAME)) \
            .match(word, i)
        if m:
            name = m.group(1) or m.group(4)
            v = env.get(name)
            if m.group(2):  # ${X:-d} / ${X-d}
                empty_counts = m.group(2).startswith(":")
                if v is None or (empty_counts and v == ""):
                    v = expand(m.group(3), env)
                    if isinstance(v, Unresolved):
                        return Unresolved(word)
            elif m.group(1) is None and m.group(3):
                return Unresolved(word)
            if v is None:
                return Unresolved(word)
            out.append(v)
            i = m.end()
            continue
        if word[i] == "$" and i + 1 < len(word) and word[i + 1] in "{!#@*?":
            return Unresolved(word)
        out.append(word[i])
        i += 1
    return "".join(out)


def expand_words(words, env):
    """Expands each word; a word that was one whole `$VAR` and holds spaces
    is split as the shell splits an unquoted expansion."""
    out = []
    for w in words:
        e = expand(w, env)
        if not isinstance(e, Unresolved) and re.fullmatch(
                r"\$\{?%s\}?" % NAME, w) and re.search(r"\s", e):
            out.extend(e.split())
        else:
            out.append(e)
    return out


_ENV_LIST_IDIOM = re.compile(
    r"^\$\(\s*echo\s+(?P<words>[^|)]*?)\s*\|\s*sed\s+"
    r"(?P<q>['\"])s/ / -x /g(?P=q)\s*\)$")


def _assignment_value(raw, env):
    """The value of NAME=raw in a script, or None when it needs a command
    substitution other than the `-x` list idiom."""
    raw = raw.strip()
    if raw[:1] in "'\"" and raw[-1:] == raw[:1] and len(raw) > 1:
        q, raw = raw[0], raw[1:-1]
        if q == "'":
            return raw
    m = _ENV_LIST_IDIOM.match(raw)
    if m:
        names = []
        for w in m.group("words").split():
            pm = re.fullmatch(r"\$\{!(%s)\*\}" % NAME, w)
            if pm:
                names += sorted(n for n in env if n.startswith(pm.group(1)))
            else:
                e = expand(w, env)
                if isinstance(e, Unresolved):
                    return None
                names.append(e)
        return " -x ".join(names)
    e = expand(raw, env)
    return None if isinstance(e, Unresolved) else e


def _logical_lines(script):
    """Lines with backslash-newline continuations joined, and their
    numbers (1-based, of the first physical line)."""
    out = []
    cur, start = "", None
    for n, line in enumerate(script.split("\n"), 1):
        if start is None:
            start = n
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        out.append((start, cur + line))
        cur, start = "", None
    if cur:
        out.append((start, cur))
    return out


def _simple_commands(line):
    """The simple commands of one line, as lists of words (quotes removed),
    split at ; && || | &. A line shlex cannot read yields nothing."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lex.whitespace_split = True
    lex.commenters = "#"
    try:
        toks = list(lex)
    except ValueError:
        return []
    cmds, cur = [], []
    for t in toks:
        if t and all(ch in ";&|" for ch in t):
            if cur:
                cmds.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        cmds.append(cur)
    return cmds


def find_in_script(script, env):
    """Launches in a shell script, their words expanded with env plus the
    script's simple assignments up to that line. Each Launch's env_add
    holds what the script exported (or put before the command) by then:
    the launcher process has it in its environment."""
    env = dict(env)
    exported = {}
    found = []
    for n, line in _logical_lines(script):
        m = re.match(r"^\s*(export\s+)?(%s)=(.*)$" % NAME, line)
        if m and not re.search(r"\s(mpirun|mpiexec|torchrun)\s", line):
            v = _assignment_value(m.group(3), env)
            if v is None:
                env.pop(m.group(2), None)
                exported.pop(m.group(2), None)
            else:
                env[m.group(2)] = v
                if m.group(1) or m.group(2) in exported:
                    exported[m.group(2)] = v
            continue
        m = re.match(r"^\s*export\s+((?:%s\s*)+)$" % NAME, line)
        if m:
            for name in m.group(1).split():
                if name in env:
                    exported[name] = env[name]
            continue
        for words in _simple_commands(line):
            i = 0
            prefix = {}
            while i < len(words) and (words[i] in PREFIX_WORDS or re.match(
                    r"^%s=" % NAME, words[i])):
                if "=" in words[i]:
                    k, v = words[i].split("=", 1)
                    v = expand(v, env)
                    if not isinstance(v, Unresolved):
                        prefix[k] = v
                i += 1
            if i >= len(words):
                continue
            lw = classify([expand(words[i], env)] + words[i + 1:])
            if lw:
                lw.words = expand_words(lw.words, dict(env, **prefix))
                lw.where = "script line %d" % n
                lw.raw = line.strip()
                lw.env_add = dict(exported, **prefix)
                found.append(lw)
    return found


def shell_script(argv):
    """The script of `sh -c SCRIPT` (and -lc, -xc, -ec, ...), or None."""
    if not argv or base(argv[0]) not in SHELLS:
        return None
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if "c" in argv[i][1:]:
            return argv[i + 1] if i + 1 < len(argv) else None
        i += 1
    return None


def find_launches(argv, env):
    """Every launcher a container's command line (command + args) runs."""
    argv = [str(a) for a in argv]
    direct = classify(argv)
    if direct:
        direct.words = expand_words(direct.words, env)
        return [direct]
    script = shell_script(argv)
    if script is not None:
        return find_in_script(script, env)
    return []


def program_launch(program_words, env):
    """For mpirun's program part: a torchrun it starts, directly or in
    `bash -c`, or None."""
    found = find_launches([str(w) for w in program_words], env)
    return next((f for f in found if f.kind == "torch"), None)
