#!/usr/bin/python3
"""test/runtimes/torchrun_shim.py [run|launch] ARGS...: torchrun itself
(torch.distributed.run, or the older torch.distributed.launch), with one
fix that lets Debian 12's torch 1.13 start at all on its Python 3.11.

In Python 3.11 iterating an IntFlag no longer yields its zero member or
its aliases, so torch 1.13's Std.from_str("0") (the default of
--redirects and --tee) returns None and every torchrun dies in to_map()
before it starts a worker ("'NoneType' object has no attribute 'get'").
fix_std() makes from_str return Std(value) as it meant to; nothing else
of torchrun is changed. Run with /usr/bin/python3 (python3-torch).
"""

import re
import sys

from torch.distributed.elastic.multiprocessing import api


def _from_str(cls, vm):
    if re.match(api._VALUE_REGEX, vm):
        return cls(int(vm))
    if re.match(api._MAPPING_REGEX, vm):
        return {int(k): cls(int(v))
                for k, v in (p.split(":") for p in vm.split(","))}
    raise ValueError("%s does not match: %s or %s" % (
        vm, api._VALUE_REGEX, api._MAPPING_REGEX))


def fix_std():
    api.Std.from_str = classmethod(_from_str)


if __name__ == "__main__":
    fix_std()
    entry = sys.argv[1] if len(sys.argv) > 1 else "run"
    if entry == "launch":
        from torch.distributed import launch
        sys.argv = ["torch.distributed.launch"] + sys.argv[2:]
        launch.main()
    else:
        from torch.distributed import run
        run.main(sys.argv[2:])
