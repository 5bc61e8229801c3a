"""The GPU testbed's import check at several checkouts in one interpreter.

python3 gpu_imports.py DIR... imports the engine's packages from each DIR
in turn, as configs/gpu-testbed.yaml's build step does, and prints one JSON
object: DIR to "" when everything imported, else the error. torch is
imported once; the engine's modules are dropped between checkouts.
"""

import importlib
import json
import sys

import torch  # noqa: F401

PACKAGES = ("model", "attention", "speculative", "runtime", "communicator", "bench.run")
ROOTS = ("model", "attention", "speculative", "runtime", "communicator", "bench", "tests")

results = {}
for root in sys.argv[1:]:
    sys.path.insert(0, root)
    try:
        for name in PACKAGES:
            importlib.import_module(name)
        results[root] = ""
    except Exception as err:  # the check reports any failure to import
        results[root] = "%s: %s" % (type(err).__name__, err)
    finally:
        sys.path.remove(root)
        for name in list(sys.modules):
            if name.split(".")[0] in ROOTS:
                del sys.modules[name]
print(json.dumps(results))
