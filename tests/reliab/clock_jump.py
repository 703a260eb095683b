#!/usr/bin/env python3
"""System suspend during a request: the monotonic clock jumps forward by an
hour (real binary, tiny model). The daemon runs with
INFILLD_TEST_CLOCK_JUMP_MS=3600000, so each SIGUSR2 moves the clock its
budgets, deadlines and timeouts read (base_now_ns) an hour ahead
(base/clockjump.c).

Checks: a request in flight when the clock jumps is answered (a result,
null or an error, never silence) and soon, since its deadline has passed;
one cancelled right after the jump is answered too; the request's reported
latency shows the jump (so it really was in flight); requests after the
jump are served and their latency no longer counts it; the planner did not
learn the jumped steps as the machine's speed (its cost scale is not at the
cap); several jumps in a row change nothing of that; the document copy stays exact; shutdown and
exit end the daemon with code 0.

usage: clock_jump.py   (INFILLD_BIN: the daemon; INFILLD_MODELS optional)
"""
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "protocol"))
from lspclient import Checks, Client, RpcError, init_params  # noqa: E402

REAL = os.environ["INFILLD_BIN"]
MODELS = os.environ.get("INFILLD_MODELS") or os.path.join(os.path.dirname(REAL), "models")
TINY = os.path.join(MODELS, "tiny-dream")
JUMP_MS = 3600 * 1000
URI = "file:///clock/jump.py"
TEXT = "def area(w, h):\n    return \n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
# Requests long enough to be caught in flight: many steps, a generous budget.
OPTS = {"status": True, "candidates": 1, "validate": False, "steps": 64, "maxSteps": 64,
        "latencyBudgetMs": {"automatic": 3000, "invoked": 3000}}
check = Checks()


def ask(c):
    return c.send_request("textDocument/inlineCompletion", {
        "textDocument": {"uri": URI}, "position": {"line": 1, "character": 11},
        "context": {"triggerKind": 1}})


def outcome(c, rid, timeout=60):
    """('result'|'null'|'error N'|'timeout', seconds waited)."""
    t0 = time.monotonic()
    try:
        r = c.wait_response(rid, timeout)
        kind = "null" if r is None else "result"
    except RpcError as e:
        kind = f"error {e.code}"
    except TimeoutError:
        kind = "timeout"
    return kind, time.monotonic() - t0


def statuses(c, start):
    with c.cond:
        return [n.get("params") or {} for n in c.notifications[start:]
                if n.get("method") == "infilld/status"]


def last_latency(c, start):
    """lastLatencyMs of the newest infilld/status since notification index start."""
    lat = [n.get("lastLatencyMs") for n in statuses(c, start) if n.get("lastLatencyMs") is not None]
    return lat[-1] if lat else None


def cost_scale(c):
    """The planner's cost scale in the newest status that carries a plan."""
    plans = [n["plan"] for n in statuses(c, 0) if isinstance(n.get("plan"), dict)]
    cost = plans[-1].get("cost") if plans else None
    return cost.get("scale") if isinstance(cost, dict) else None


def main():
    if not os.path.isfile(os.path.join(TINY, "config.json")):
        print(f"FAIL no tiny model at {TINY}")
        return 1
    env = dict(os.environ, INFILLD_TEST_CLOCK_JUMP_MS=str(JUMP_MS))
    c = Client.spawn([REAL, "--device", "cpu", "--model", TINY, "--log-level", "info"], env=env,
                     stderr=subprocess.PIPE)
    log = []

    def drain():
        for raw in c.proc.stderr:
            log.append(raw.decode("utf-8", "replace").rstrip("\n"))

    threading.Thread(target=drain, daemon=True).start()
    c.request("initialize", init_params(options=dict(OPTS)), timeout=120)
    c.notify("initialized", {})
    c.notify("textDocument/didOpen", {"textDocument": {
        "uri": URI, "languageId": "python", "version": 1, "text": TEXT}})
    pid = c.proc.pid

    # Before any jump: what a request costs here.
    kind, base_s = outcome(c, ask(c))
    check(kind in ("result", "null"), f"a request before the jump is answered ({kind}, "
                                      f"{base_s * 1000:.0f} ms)")

    scale0 = cost_scale(c)

    # In flight: jump at several points of a request's life; each is answered.
    seen_jump = 0
    for delay in (0.0, 0.01, 0.03, 0.06, 0.1, 0.2):
        start = len(c.notifications)
        rid = ask(c)
        time.sleep(delay)
        os.kill(pid, signal.SIGUSR2)
        kind, waited = outcome(c, rid)
        time.sleep(0.05)  # the status notification follows the answer
        lat = last_latency(c, start)
        in_flight = lat is not None and lat >= JUMP_MS
        seen_jump += in_flight
        check(kind != "timeout" and waited < 30,
              f"jump {delay * 1000:.0f} ms after the request: answered ({kind}, "
              f"{waited * 1000:.0f} ms; latency {lat} ms{', in flight' if in_flight else ''})")
    check(seen_jump >= 1, f"{seen_jump} of 6 requests were in flight during a jump "
                          "(their latency counts the hour)")

    # A storm of jumps through a request (some land inside model steps).
    rid = ask(c)
    for _ in range(40):
        time.sleep(0.003)
        os.kill(pid, signal.SIGUSR2)
    kind, waited = outcome(c, rid)
    check(kind != "timeout" and waited < 30, f"40 jumps through one request: answered ({kind})")
    time.sleep(0.1)
    # The jumped steps taught the planner nothing: its cost scale is not at
    # the cap, which would refuse requests after a resume.
    # (One jumped step learnt moves it to the cap 8, the next ordinary run
    # back to ~6; load alone moves it by less than a factor 2 here.)
    scale = cost_scale(c)
    limit = max(4.0, 2 * (scale0 or 1.0))
    check(scale is not None and scale < limit,
          f"after it the planner's cost scale is {scale} (before the jumps {scale0}; "
          f"under {limit}: the jumped steps were not learnt)")

    # Cancelled right after a jump: answered once, cleanly.
    rid = ask(c)
    time.sleep(0.02)
    os.kill(pid, signal.SIGUSR2)
    c.notify("$/cancelRequest", {"id": rid})
    kind, waited = outcome(c, rid)
    check(kind in ("result", "null", "error -32800") and waited < 30,
          f"a request cancelled right after a jump is answered ({kind})")

    # An edit while the clock jumps applies exactly.
    os.kill(pid, signal.SIGUSR2)
    c.notify("textDocument/didChange", {
        "textDocument": {"uri": URI, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 1, "character": 11},
                                      "end": {"line": 1, "character": 11}}, "text": "w"}]})
    text = TEXT.replace("    return \n", "    return w\n", 1)

    # Later requests: served, and their latency no longer counts the jumps.
    lats, kinds = [], []
    for _ in range(5):
        start = len(c.notifications)
        kind, waited = outcome(c, ask(c))
        time.sleep(0.05)
        kinds.append(kind)
        lats.append(last_latency(c, start))
    check(all(k in ("result", "null") for k in kinds),
          f"5 requests after the jumps are answered ({', '.join(kinds)})")
    # (A request the planner answers without running keeps the last latency.)
    check(lats[-1] is not None and lats[-1] < 60000,
          f"latency is ordinary again ({', '.join(f'{x:.0f}' for x in lats if x)} ms)")

    got = c.request("infilld/viewFileText", {"textDocument": {"uri": URI}}, timeout=60)
    check(got == text, "the document copy is exact after the jumps")

    c.request("shutdown", None, timeout=60)
    c.notify("exit", None)
    try:
        code = c.wait_exit(60)
    except subprocess.TimeoutExpired:
        code = "none (still running)"
        c.proc.kill()
    check(code == 0, f"shutdown + exit end the daemon with code 0 (got {code})")
    c.close()
    bad = [x for x in log if "Sanitizer" in x or "runtime error:" in x]
    check(not bad, "no sanitizer report")
    if check.failures:
        print("\n".join(log[-40:]))
    print(f"{check.failures} failure(s)")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
