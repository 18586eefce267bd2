#!/usr/bin/python3
"""jsonread against Python's json module, an independent reader.

    jsonread_oracle.py TEST_BINARY

Writes a few thousand texts (random JSON from pieces chosen to sit on
either side of RFC 8259's lines, and the repository's reviews with a byte
cut, changed or added), has `TEST_BINARY --print` read them with
json/jsonread.c, and checks each verdict against Python:
- Python refuses (json.loads on strict UTF-8, no NaN/Infinity) -> jsonread
  refuses; Python takes it -> jsonread takes it, with the same value
  (numbers compared as doubles, every managedFields array emptied),
- except where jsonread is stricter on purpose, and says so: a string with
  a lone surrogate in it, a number longer than 63 bytes, an object with
  two members of one name (outside managedFields).
A string holding \\u0000 is taken and comes back with it (jsonread reads
it whole; --print writes it back as \\u0000).
"""
import glob
import json
import os
import random
import subprocess
import sys
import tempfile

PIECES_STR = ['a', 'bcdefghi', '\\"', '\\\\', '\\/', '\\n', '\\u0041',
              '\\u00e9', '\\ud83d\\ude00', '\\ud800', '\\udc00', '\\u0000',
              '\\x', '\\u12', '\xc3\xa9', '\xe2\x82\xac', '\xf0\x9f\x98\x80',
              '\xc3', '\xff', '\xed\xa0\x80', '\xc0\xaf', '\n', '\x01',
              '\t', '\x7f', ' ']
NUMBERS = ['0', '-0', '1', '-1', '10', '0.5', '-0.5e-3', '1E+2', '1e999',
           '12345678901234567890', '3000000000', '1.7976931348623157e308',
           '01', '-01', '1.', '.5', '+1', '1e', '1e+', '-', '0x10',
           '1' * 64, '4.9e-324', '123456789012345', '1234567890123456']
WORDS = ['true', 'false', 'null', 'tru', 'nul', 'NaN', 'Infinity', 'True']
SPACE = ['', '', '', ' ', '\n', '\t', '\r\n  ', '\x0b', '\x0c']


class Stricter(Exception):
    """What jsonread refuses on purpose and Python takes."""


def gen_string(rng):
    return '"' + ''.join(rng.choice(PIECES_STR)
                         for _ in range(rng.randrange(4))) + '"'


def gen_value(rng, depth):
    k = rng.randrange(10 if depth < 4 else 6)
    if k < 2:
        return gen_string(rng)
    if k < 4:
        return rng.choice(NUMBERS)
    if k < 6:
        return rng.choice(WORDS)
    sp = lambda: rng.choice(SPACE)
    n = rng.randrange(4)
    if k < 8:
        items = [sp() + gen_value(rng, depth + 1) + sp() for _ in range(n)]
        body = ','.join(items)
        if rng.random() < 0.05:
            body += ','
        return '[' + body + ']'
    names = ['"managedFields"', '"spec"', '"a"', '"a"', '"b"', gen_string(rng)]
    members = [sp() + rng.choice(names) + sp() + ':' + sp() +
               gen_value(rng, depth + 1) + sp() for _ in range(n)]
    return '{' + ','.join(members) + '}'


def gen_doc(rng):
    text = rng.choice(SPACE) + gen_value(rng, 0) + rng.choice(SPACE)
    if rng.random() < 0.05:
        text += rng.choice(['x', '{}', ',', '\x00'])
    if rng.random() < 0.03:
        text = '\ufeff' + text
    # The pieces are written as Latin-1 so that invalid UTF-8 bytes stay.
    return text.encode('latin-1', errors='replace') \
        if all(ord(c) < 256 for c in text) else text.encode('utf-8')


def number_hook(text):
    if len(text) > 63:
        raise Stricter('number longer than 63 bytes')
    return float(text)


def refuse_constant(name):
    raise ValueError(name)


class Members(dict):
    """An object as Python reads it, knowing whether a name came twice."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.twice = len(self) != len(pairs)


def check_strings(v, managed=False):
    """Raises Stricter for what jsonread refuses and Python takes; names
    twice in one object count outside managedFields arrays only (jsonread
    checks those without building them)."""
    if isinstance(v, Members) and v.twice and not managed:
        raise Stricter('member twice')
    if isinstance(v, str):
        try:
            v.encode('utf-8')
        except UnicodeEncodeError:
            raise Stricter('lone surrogate')
    elif isinstance(v, list):
        for x in v:
            check_strings(x, managed)
    elif isinstance(v, dict):
        for k, x in v.items():
            check_strings(k)
            check_strings(x, managed or (k == 'managedFields' and
                                         isinstance(x, list)))


def normal(v):
    """As cJSON's printer gives it back: numbers as doubles, inf as null,
    managedFields arrays emptied."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        f = float(v)
        return None if f in (float('inf'), float('-inf')) else f
    if isinstance(v, list):
        return [normal(x) for x in v]
    return {k: ([] if k == 'managedFields' and isinstance(x, list)
                else normal(x)) for k, x in v.items()}


def oracle(data):
    """('ok', value), ('error', why) or ('stricter', why)."""
    try:
        text = data.decode('utf-8')
        value = json.loads(text, parse_float=number_hook,
                           parse_int=number_hook,
                           parse_constant=refuse_constant,
                           object_pairs_hook=Members)
        check_strings(value)
    except Stricter as e:
        return 'stricter', str(e)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        return 'error', str(e)
    return 'ok', normal(value)


def mutants(rng, data, n):
    out = []
    for _ in range(n):
        at = rng.randrange(len(data))
        b = rng.choice(b'"\\{}[],:0-.eE \n\x01\xc3\xffu1')
        k = rng.randrange(4)
        if k == 0:
            out.append(data[:at])
        elif k == 1:
            out.append(data[:at] + bytes([b]) + data[at + 1:])
        elif k == 2:
            out.append(data[:at] + data[at + 1:])
        else:
            out.append(data[:at] + bytes([b]) + data[at:])
    return out


def main():
    binary = sys.argv[1]
    rng = random.Random(8259)
    docs = [gen_doc(rng) for _ in range(4000)]
    for path in sorted(glob.glob('test/golden/cases/*.in.json'))[::4]:
        with open(path, 'rb') as f:
            data = f.read()
        docs.append(data)
        docs.extend(mutants(rng, data, 8))
    counts = {'ok': 0, 'error': 0, 'stricter': 0}
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, d in enumerate(docs):
            p = os.path.join(tmp, str(i))
            with open(p, 'wb') as f:
                f.write(d)
            paths.append(p)
        lines = []
        for i in range(0, len(paths), 500):
            run = subprocess.run([binary, '--print'] + paths[i:i + 500],
                                 capture_output=True, check=True)
            # One line per text, cut at '\n' only: splitlines() would also
            # cut inside a value holding U+2028 or U+0085.
            lines.extend(run.stdout.decode('utf-8').split('\n')[:-1])
    if len(lines) != len(docs):
        print(f'not ok - jsonread_oracle: {len(lines)} lines for '
              f'{len(docs)} texts')
        return 1
    for data, line in zip(docs, lines):
        kind, why = oracle(data)
        counts[kind] += 1
        mine_ok = line.startswith('ok ')
        if kind == 'ok':
            same = mine_ok and normal(json.loads(line[3:])) == why
        else:
            same = not mine_ok
        if not same:
            bad += 1
            if bad <= 5:
                print(f'# differs on {data[:200]!r}: python {kind} '
                      f'({str(why)[:80]}), jsonread {line[:120]}')
    print(f'# jsonread against Python json: {len(docs)} texts, '
          f'{counts["ok"]} taken, {counts["error"]} refused, '
          f'{counts["stricter"]} refused by jsonread alone on purpose')
    if bad or counts['ok'] < 500 or counts['error'] < 500:
        print(f'not ok - jsonread_oracle: {bad} differ')
        return 1
    print('ok - test/unit/jsonread_oracle.py')
    return 0


if __name__ == '__main__':
    sys.exit(main())
