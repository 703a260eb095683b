#!/usr/bin/env python3
"""`infilld eval` end to end on the embedded tiny model and the copy baseline.

usage: eval_cli.py INFILLD FIXTURE SHARED_DATA

Three HumanEval single-line problems (read from SHARED_DATA at test time) and
the committed held-out fixture, small holes so that the random model is quick:
  - one JSON row per (set, model), every score a share in [0, 1], pass@1 only
    where the set has tests, EOS-ended only for models;
  - the copy baseline answers the fixture's first item exactly (1 of 3);
  - --jobs 2 gives the same answers and scores as --jobs 1;
  - --context-cache 2 requests each task twice before scoring it: a task
    longer than the re-encode window then reuses the kept context (its row
    counts it warm), the fixture's short ones do not and answer as without;
  - a missing set and an unknown option fail with a message.
Skipped (77) without the data, except under CI=true."""
import json
import os
import subprocess
import sys
import tempfile

infilld, fixture, shared = sys.argv[1:4]
if not os.path.exists(os.path.join(shared, "humaneval-infilling")):
    print("eval_cli: no HumanEval data under", shared, file=sys.stderr)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def run(jobs, items):
    cmd = [infilld, "eval", "--set", "humaneval-single", "--set", fixture,
           "--model", "tiny", "--model", "baseline:copy", "--limit", "3",
           "--max-hole", "8", "--steps", "4", "--json", "--jobs", str(jobs),
           "--data", shared, "--items", items, "--device", "cpu"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    check(p.returncode == 0, "exit status %d: %s" % (p.returncode, p.stderr[-2000:]))
    check("eval humaneval-single tiny: 3 tasks" in p.stderr, "progress on stderr")
    out = json.loads(p.stdout)
    with open(items) as f:
        its = [json.loads(l) for l in f]
    return out, its


with tempfile.TemporaryDirectory() as tmp:
    out, items1 = run(1, os.path.join(tmp, "a.jsonl"))
    rows = out["rows"]
    check(len(rows) == 4, "four rows")
    check(out["sandbox"]["seccomp"] is True, "socket(2) refused")
    check(isinstance(out["date"], str) and isinstance(out["machine"], str), "date, machine")
    by = {(r["set"] if r["set"] == "humaneval-single" else "fixture", r["model"]): r
          for r in rows}
    for key, r in by.items():
        check(r["n"] == 3, "%s: n" % (key,))
        for k in ("exact", "edit_sim", "first_line", "valid", "answered"):
            check(0 <= r[k] <= 1, "%s: %s in [0, 1]" % (key, k))
        check(r["errors"] == 0, "%s: no errors" % (key,))
        if r["model"] == "tiny":
            check(r["kind"] == "model" and isinstance(r["sampler"], str), "tiny: a model row")
            check(0 <= r["eos_ended"] <= 1, "tiny: EOS share")
            check(r["steps"] == 4 and r["max_hole"] == 8, "tiny: the configuration")
            check(r["steps_per_task"] > 0, "tiny: steps ran")
        else:
            check(r["kind"] == "baseline" and r["eos_ended"] is None, "baseline row")
    he = by[("humaneval-single", "tiny")]
    check(he["tested"] == 3 and 0 <= he["pass_at_1"] <= 1, "HumanEval rows run tests")
    check(by[("fixture", "tiny")]["pass_at_1"] is None, "no tests, no pass@1")
    cp = by[("fixture", "baseline:copy")]
    check(abs(cp["exact"] - 1 / 3) < 1e-9, "copy baseline: 1 of 3 exact (got %s)" % cp["exact"])
    first = [i for i in items1 if i["model"] == "baseline:copy" and i["id"] == "fixture/py/0"]
    check(len(first) == 1 and first[0]["answer"] == "x * x for x in xs", "copy answer")
    check(len(items1) == 12, "one item line per task and row")
    check(all(("answer" in i) and ((i["answer"] is not None) == i["answered"]) for i in items1),
          "every answered item carries its answer")

    out2, items2 = run(2, os.path.join(tmp, "b.jsonl"))
    strip = lambda its: [{k: v for k, v in i.items() if k != "ms"} for i in its]
    check(strip(items1) == strip(items2), "--jobs 2 answers as --jobs 1")
    keep = lambda rs: [{k: v for k, v in r.items() if k != "ms_per_task"} for r in rs]
    check(keep(rows) == keep(out2["rows"]), "--jobs 2 scores as --jobs 1")

    # --context-cache: a long task (40 functions before the hole) and the fixture
    long_task = {"id": "long/py/0", "lang": "python", "package": "long", "version": "0",
                 "file": "b.py", "cursor": "in_line", "multiline": False,
                 "prefix": "".join("def f%d(a, b):\n    c = a * %d + b\n    return c - %d\n\n"
                                   % (i, i, i) for i in range(40)) + "def g(xs):\n    total = sum(",
                 "middle": "x for x in xs", "suffix": ")\n    return total\n"}
    long_set = os.path.join(tmp, "long.jsonl")
    with open(long_set, "w") as f:
        f.write(json.dumps(long_task) + "\n")

    def cc_run(k, items):
        cmd = [infilld, "eval", "--set", fixture, "--set", long_set, "--model", "tiny",
               "--limit", "3", "--max-hole", "8", "--steps", "4", "--json", "--device", "cpu",
               "--context-cache", str(k), "--items", items]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        check(p.returncode == 0, "--context-cache %d: exit %d %s" % (k, p.returncode, p.stderr))
        with open(items) as f:
            return json.loads(p.stdout)["rows"], [json.loads(l) for l in f]

    rows0, its0 = cc_run(0, os.path.join(tmp, "c0.jsonl"))
    rows2, its2 = cc_run(2, os.path.join(tmp, "c2.jsonl"))
    check([r["context_cache"] for r in rows0 + rows2] == [0, 0, 2, 2], "context_cache in the rows")
    check([r["context_warm"] for r in rows0] == [0, 0], "no kept context without the option")
    check([r["context_warm"] for r in rows2] == [0, 1],
          "the long task warm, the short ones not: %s" % [r["context_warm"] for r in rows2])
    check([i["answer"] for i in its0[:3]] == [i["answer"] for i in its2[:3]],
          "short tasks (full forwards) answer as without the option")
    p = subprocess.run([infilld, "eval", "--set", "x", "--context-cache", "65"],
                       capture_output=True, text=True)
    check(p.returncode == 2, "--context-cache above 64 refused")

    p = subprocess.run([infilld, "eval", "--set", os.path.join(tmp, "none.jsonl"),
                        "--model", "baseline:copy"], capture_output=True, text=True)
    check(p.returncode == 1 and "cannot open" in p.stderr, "a missing set: %s" % p.stderr)
    p = subprocess.run([infilld, "eval", "--set", "x", "--bogus", "1"], capture_output=True,
                       text=True)
    check(p.returncode == 2 and "unknown option" in p.stderr, "an unknown option")

print("eval_cli: %d failure(s)" % failures, file=sys.stderr)
sys.exit(1 if failures else 0)
