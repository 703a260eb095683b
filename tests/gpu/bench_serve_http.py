#!/usr/bin/env python3
"""Load benchmark for infilld serve-http, Python's stdlib only, for the GPU
machine (no Node there): the same measurement as
tests/remote/bench_serve_http.mjs. N concurrent keep-alive HTTP sessions
(threads, one connection each) send POST /v1/fim/completions back to back
(each prompt distinct) for S seconds; every request must get exactly one
answer (a new id each, sent = answered = the server's own count). Prints one
JSON line: p50/p99 latency, throughput, engine runs.

  bench_serve_http.py INFILLD_BIN [--sessions 32] [--seconds 10]
      [--max-tokens 8] [--model DIR] [--device cpu|cuda]
      [--batch-ms 5] [--batch-max 8] [--check]
"""
import argparse, http.client, json, re, subprocess, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("bin")
ap.add_argument("--sessions", type=int, default=32)
ap.add_argument("--seconds", type=float, default=10)
ap.add_argument("--max-tokens", type=int, default=8)
ap.add_argument("--model")
ap.add_argument("--device")
ap.add_argument("--batch-ms", default="5")
ap.add_argument("--batch-max", default="8")
ap.add_argument("--check", action="store_true")
a = ap.parse_args()

cmd = [a.bin, "serve-http", "--listen", "127.0.0.1:0", "--per-client", str(a.sessions * 2),
       "--queue", str(a.sessions * 2), "--log-level", "info",
       "--batch-ms", a.batch_ms, "--batch-max", a.batch_max]
if a.model:
    cmd += ["--model", a.model]
if a.device:
    cmd += ["--device", a.device]
srv = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
err_lines = []
threading.Thread(target=lambda: err_lines.extend(srv.stderr), daemon=True).start()
port = None
t_load = time.time()
for line in srv.stdout:  # the model loads first; then "listening on ..."
    m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    if m:
        port = int(m.group(1))
        break
if port is None:
    srv.wait()
    sys.exit("serve-http exited %s: %s" % (srv.returncode, "".join(err_lines)[-2000:]))
load_s = time.time() - t_load

lock = threading.Lock()
lat, ids, statuses = [], set(), {}
count = {"sent": 0, "answered": 0, "dup": 0, "errors": 0}
t0 = time.time()
end = t0 + a.seconds


def session(k):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    n = 0
    while time.time() < end:
        body = json.dumps({"prompt": "# session %d request %d\ndef add(a, b):\n    return " % (k, n),
                           "suffix": "\n", "max_tokens": a.max_tokens})
        n += 1
        ts = time.perf_counter()
        with lock:
            count["sent"] += 1
        try:
            conn.request("POST", "/v1/fim/completions", body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            status, data = r.status, r.read()
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            status, data = 0, b""
        ms = (time.perf_counter() - ts) * 1000
        try:
            j = json.loads(data)
        except ValueError:
            j = None
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            if status == 200 and isinstance(j, dict) and isinstance(j.get("id"), str) and len(j.get("choices") or []) == 1:
                count["answered"] += 1
                if j["id"] in ids:
                    count["dup"] += 1
                ids.add(j["id"])
                lat.append(ms)
            else:
                count["errors"] += 1
    conn.close()


th = [threading.Thread(target=session, args=(k,)) for k in range(a.sessions)]
for t in th:
    t.start()
for t in th:
    t.join()
wall = time.time() - t0
srv.terminate()
code = srv.wait()
time.sleep(0.1)
err = "".join(err_lines)
st = re.search(r"stopped: (\d+) answered.*; (\d+) runs for (\d+) requests", err)
lat.sort()
q = lambda p: round(lat[min(len(lat) - 1, int(p * len(lat)))]) if lat else None
res = {"sessions": a.sessions, "seconds": a.seconds, "max_tokens": a.max_tokens,
       "batch_ms": float(a.batch_ms), "batch_max": int(a.batch_max), "device": a.device or "auto",
       "model": a.model or "embedded tiny", "load_s": round(load_s, 1),
       "sent": count["sent"], "answered": count["answered"], "errors": count["errors"],
       "duplicated": count["dup"], "statuses": statuses,
       "server_answered": int(st.group(1)) if st else None, "server_exit": code,
       "engine_runs": int(st.group(2)) if st else None,
       "p50_ms": q(0.5), "p99_ms": q(0.99),
       "throughput_rps": round(count["answered"] / wall, 2), "wall_s": round(wall, 1)}
print(json.dumps(res), flush=True)
if a.check:
    ok = (count["sent"] == count["answered"] and count["errors"] == 0 and count["dup"] == 0
          and code == 0 and res["server_answered"] == count["answered"])
    if not ok:
        sys.exit("FAIL: lost, duplicated or failed answers\n" + err[-2000:])
