#!/usr/bin/env python3
"""The README is executable: every setup snippet it shows is run exactly as
written, with only paths substituted. Snippets are found by the marker line
`<!-- readme-test: NAME -->` right before a fenced block, so a README change
is what gets tested. A marker this script does not know, or a known one that
is missing, fails.

usage: readme.py nvim      Neovim: lazy.nvim spec, packer line, native package
                           + setup({}), the 0.12 no-plugin snippet (only on
                           0.12+), :checkhealth before setup(). The Neovim
                           binary is $INFILLD_NVIM (default: nvim on PATH).
       readme.py vscode    the settings.json block: keys and values valid for
                           the extension's manifest, and the daemon the
                           extension's settings module derives from it serves
       readme.py config    the config-file example, read by the daemon
       readme.py running   every command line under "Running the daemon"
Environment: INFILLD_BIN (the built daemon; its folder goes first on PATH so
`infilld` means it), INFILLD_TINY_MODEL (model folder), INFILLD_VSCODE_OUT
(compiled extension JS, for `vscode`). Quick start is run by tests/fresh/run.sh.
"""
import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "protocol"))
from lspclient import Client, RpcError, init_params  # noqa: E402

KNOWN = {"quick-start", "nvim-lazy", "nvim-packer", "nvim-native-sh", "nvim-native-lua",
         "nvim-012", "vscode-settings", "config-file", "running"}
failures = 0


def check(cond, what):
    global failures
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1
    return cond


def die(msg):
    print("FAIL " + msg, flush=True)
    sys.exit(1)


def snippets():
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    out = {}
    for m in re.finditer(r"<!-- readme-test: ([\w-]+) -->\n```(\w*)\n(.*?)\n```", text, re.S):
        out[m.group(1)] = m.group(3) + "\n"
    markers = set(re.findall(r"<!-- readme-test: ([\w-]+) -->", text))
    if markers - set(out):
        die(f"markers not followed by a fenced block: {sorted(markers - set(out))}")
    if markers - KNOWN:
        die(f"README markers this test cannot run: {sorted(markers - KNOWN)}")
    if KNOWN - markers:
        die(f"README lost the snippets {sorted(KNOWN - markers)}")
    return out


def need_env(name):
    v = os.environ.get(name)
    if not v:
        die(f"${name} is not set")
    return v


def base_env(home):
    """A new user's environment: only HOME and PATH (the built daemon first)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "INFILLD_", "NVIM"))}
    env["HOME"] = home
    env["PATH"] = os.path.dirname(os.path.abspath(need_env("INFILLD_BIN"))) + ":" + env.get("PATH", "")
    return env


def new_home(tag):
    home = tempfile.mkdtemp(prefix=f"infilld-readme-{tag}-")
    atexit.register(shutil.rmtree, home, True)
    return home


def sh(script, env, cwd=None):
    p = subprocess.run(["sh", "-ec", script], env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=60)
    return p


# ---- Neovim ---------------------------------------------------------------

def nvim_version(nvim):
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True,
                           timeout=30).stdout.split("\n")[0]
    m = re.search(r"v(\d+)\.(\d+)\.(\d+)", first)
    if not m:
        die(f"cannot read the version of {nvim}: {first!r}")
    return tuple(int(x) for x in m.groups())


def run_nvim(nvim, home, init_lua, mode, env):
    cfg = os.path.join(home, ".config", "nvim")
    os.makedirs(cfg, exist_ok=True)
    with open(os.path.join(cfg, "init.lua"), "w") as f:
        f.write(init_lua)
    proj = os.path.join(home, "project")
    os.makedirs(os.path.join(proj, ".git"), exist_ok=True)
    pyfile = os.path.join(proj, "fib.py")
    shutil.copy(os.path.join(REPO, "docs", "examples", "fib.py"), pyfile)
    result = os.path.join(home, f"result-{mode}.json")
    env = dict(env, README_MODE=mode, README_RESULT=result, README_FILE=pyfile)
    p = subprocess.run([nvim, "--headless", "-i", "NONE", "-n", "-c",
                        "luafile " + os.path.join(HERE, "nvim_check.lua")],
                       env=env, cwd=proj, capture_output=True, text=True, timeout=120)
    errs = (p.stderr + p.stdout).strip()
    if not os.path.exists(result):
        check(False, f"{mode}: Neovim wrote no result (rc {p.returncode}): {errs[:2000]}")
        return None, errs
    with open(result) as f:
        return json.load(f), errs


def no_errors(label, res, errs):
    bad = re.search(r"E\d{3,4}:|Error detected|Error executing|stack traceback", errs)
    check(not bad, f"{label}: nothing on Neovim's stderr looks like an error"
          + (f": {errs[:1500]}" if bad else ""))
    check(res.get("errmsg_end", "") == "", f"{label}: v:errmsg is empty ({res.get('errmsg_end')!r})")


def check_plugin(label, res, errs, debounce=150):
    if res is None:
        return
    no_errors(label, res, errs)
    check(res.get("loaded") is True, f"{label}: require('infilld') loads")
    check(res.get("is_setup") is True, f"{label}: setup() ran")
    check(res.get("path") == "infilld", f"{label}: defaults kept: path = {res.get('path')!r}")
    check(res.get("keymap_accept") == "<M-l>", f"{label}: nested defaults kept: keymaps.accept")
    check(res.get("debounce_ms") == debounce, f"{label}: debounce_ms = {res.get('debounce_ms')}")
    check(res.get("attached") is True, f"{label}: the daemon started and attached to a Python buffer")
    h = res.get("health", "")
    check("rendering:" in h and "daemon:" in h and "ERROR" not in h,
          f"{label}: :checkhealth infilld reports a mode and the daemon, no error")


def test_nvim(sn):
    nvim = (os.environ.get("INFILLD_NVIM") or os.environ.get("README_NVIM_DEFAULT")
            or shutil.which("nvim"))
    if nvim and nvim.endswith("-NOTFOUND"):
        nvim = None
    if not nvim:
        die("no nvim (set INFILLD_NVIM or put nvim on PATH)")
    ver = nvim_version(nvim)
    print(f"Neovim {'.'.join(map(str, ver))}: {nvim}")
    sub = lambda s: s.replace("/path/to/infilld", REPO)  # noqa: E731

    # Native package: the shell lines as written, then an init.lua that only
    # has the README's line.
    home = new_home("native")
    env = base_env(home)
    p = sh(sub(sn["nvim-native-sh"]), env)
    check(p.returncode == 0, f"native: the install lines run (rc {p.returncode}) {p.stderr.strip()}")
    link = os.path.join(home, ".local/share/nvim/site/pack/infilld/start/infilld")
    check(os.path.isdir(os.path.join(link, "lua", "infilld")), "native: the plugin is in the package path")
    res, errs = run_nvim(nvim, home, "", "before", env)
    if res:
        h = res.get("health", "")
        check("setup() has not run" in h, ":checkhealth infilld before setup() says setup has not run")
        check("rendering:" not in h, ":checkhealth infilld before setup() reports no rendering mode")
    res, errs = run_nvim(nvim, home, sub(sn["nvim-native-lua"]), "plugin", env)
    check_plugin("native package + setup({})", res, errs)

    # lazy.nvim: the spec as written; what lazy does with it is put `dir` on
    # the runtimepath and call `config`.
    home = new_home("lazy")
    init = ("local spec = " + sub(sn["nvim-lazy"]) +
            "vim.opt.rtp:prepend(spec.dir) -- what lazy.nvim does with a dir spec\n"
            "spec.config()\n")
    res, errs = run_nvim(nvim, home, init, "plugin", base_env(home))
    check_plugin("lazy.nvim spec", res, errs)

    # packer.nvim: the use() line as written; packer puts the local plugin on
    # the runtimepath and calls `config`.
    home = new_home("packer")
    init = ("local function use(spec) -- what packer.nvim does with a local plugin\n"
            "  vim.opt.rtp:prepend(spec[1])\n  spec.config()\nend\n" + sub(sn["nvim-packer"]))
    res, errs = run_nvim(nvim, home, init, "plugin", base_env(home))
    check_plugin("packer.nvim line", res, errs)

    # Neovim 0.12's own client, no plugin.
    if ver >= (0, 12, 0):
        home = new_home("012")
        res, errs = run_nvim(nvim, home, sn["nvim-012"], "native", base_env(home))
        if res:
            no_errors("0.12 built-in client", res, errs)
            check(res.get("attached") is True, "0.12 built-in client: infilld attached")
            check(res.get("inline") is True, "0.12 built-in client: server offers inline completion")
            check(res.get("inline_enabled") is True, "0.12 built-in client: inline completion enabled")
    else:
        print(f"note: the 0.12 no-plugin snippet needs Neovim 0.12+ (this is "
              f"{'.'.join(map(str, ver))}); not run with this binary")


# ---- LSP sessions -----------------------------------------------------------

def lsp_session(c, options=None, token=None):
    opts = dict(options or {})
    if token is not None:
        opts["token"] = token
    r = c.request("initialize", init_params(options=opts) if opts else init_params(), timeout=60)
    c.notify("initialized", {})
    return r


def lsp_finish(c, what):
    check(c.request("shutdown", None) is None, f"{what}: shutdown answered")
    c.notify("exit", None)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def test_running(sn):
    model = need_env("INFILLD_TINY_MODEL")
    lines = [ln for ln in sn["running"].split("\n") if ln.strip()]
    check(len(lines) >= 5, f"running: {len(lines)} command lines")
    for line in lines:
        cmd = line.split("#")[0].strip()
        home = new_home("run")
        env = base_env(home)
        os.makedirs(os.path.join(home, "models"))
        os.symlink(os.path.abspath(model), os.path.join(home, "models", "tiny"))
        log = os.path.join(home, "infilld.log")
        run = cmd.replace("/tmp/infilld.log", log)
        port = None
        m = re.search(r"--listen ([\d.]+):(\d+)", run)
        if m:
            # Tests run in parallel: the README's port becomes a free one.
            port = free_port()
            run = run.replace(f"{m.group(1)}:{m.group(2)}", f"{m.group(1)}:{port}")
        label = f"`{cmd}`"
        if cmd == "infilld doctor":
            p = subprocess.run(["sh", "-c", run], env=env, capture_output=True, text=True, timeout=120)
            check(p.returncode == 0 and "grammars:" in p.stdout and "model:" in p.stdout,
                  f"{label}: rc {p.returncode}, prints grammars and model")
        elif port is None and re.fullmatch(r"infilld( --\S+ \S+)*", cmd):
            c = Client.spawn(["sh", "-c", "exec " + run], env=env, cwd=home)
            try:
                r = lsp_session(c)
                check(r["serverInfo"]["name"] == "infilld", f"{label}: initialize answered on stdio")
                # A buffer that is never sent to a model gives a debug line.
                uri = f"file://{home}/.env"
                c.notify("textDocument/didOpen", {"textDocument": {
                    "uri": uri, "languageId": "sh", "version": 1, "text": "A=1\n"}})
                r = c.request("textDocument/inlineCompletion", {
                    "textDocument": {"uri": uri}, "position": {"line": 0, "character": 4},
                    "context": {"triggerKind": 1}}, timeout=60)
                lsp_finish(c, label)
                check(c.wait_exit() == 0, f"{label}: exit after shutdown ends with 0")
                if "--log-file" in cmd:
                    text = open(log).read() if os.path.exists(log) else ""
                    check(re.search(r" debug .*\.env is excluded", text) is not None,
                          f"{label}: debug lines in the --log-file")
            finally:
                c.close()
        elif port is not None:
            proc = subprocess.Popen(["sh", "-c", "exec " + run], env=env, cwd=home,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, start_new_session=True)
            try:
                if "--token-file" in cmd:
                    tf = re.search(r"--token-file (\S+)", cmd).group(1).replace("~", home, 1)
                    os.makedirs(os.path.dirname(tf), exist_ok=True)
                    with open(tf, "w") as f:
                        f.write("s3cret-readme-token\n")
                    os.chmod(tf, 0o600)
                    # The daemon reads the token file at start: restart it now
                    # that the file exists (a user writes the file first).
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(10)
                    proc = subprocess.Popen(["sh", "-c", "exec " + run], env=env, cwd=home,
                                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE, start_new_session=True)
                if not check(wait_port(port), f"{label}: listening"):
                    continue
                if "--token-file" in cmd:
                    c = Client.tcp("127.0.0.1", port)
                    try:
                        lsp_session(c)
                        check(False, f"{label}: a session without the token is refused")
                    except (RpcError, Exception):
                        check(True, f"{label}: a session without the token is refused")
                    c.close()
                    c = Client.tcp("127.0.0.1", port)
                    r = lsp_session(c, token="s3cret-readme-token")
                else:
                    c = Client.tcp("127.0.0.1", port)
                    r = lsp_session(c)
                check(r["serverInfo"]["name"] == "infilld", f"{label}: a TCP session initializes")
                lsp_finish(c, label)
                c.close()
                os.killpg(proc.pid, signal.SIGTERM)
                check(proc.wait(15) == 0, f"{label}: SIGTERM ends the daemon with 0")
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        else:
            check(False, f"{label}: a README command line this test does not know how to run")
        shutil.rmtree(home, ignore_errors=True)


def test_config(sn):
    model = need_env("INFILLD_TINY_MODEL")
    home = new_home("config")
    env = base_env(home)
    text = sn["config-file"].replace("/home/me/models/dream-coder-7b", os.path.abspath(model))
    text = text.replace("/home/me", home)
    conf = json.loads(text)  # the example is valid JSON
    path = os.path.join(home, ".config", "infilld", "config.json")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run(["infilld", "doctor"], env=env, capture_output=True, text=True, timeout=120,
                       cwd=home)
    check(p.returncode == 0, f"config: infilld doctor rc {p.returncode} {p.stderr.strip()[:500]}")
    check(f"config file: {path}" in p.stdout, "config: doctor names the config file")
    check(f"model: {os.path.abspath(model)}" in p.stdout, "config: the model comes from the file")
    check(not re.search(r" (warn|error) ", p.stderr), f"config: no warning about the file: {p.stderr.strip()[:500]}")
    # The exclude list and the disabled language, in a session.
    # The daemon logs "URI is excluded" at debug for a buffer it keeps from
    # the model; a plain Python buffer is the control.
    errlog = open(os.path.join(home, "stderr.log"), "w+")
    c = Client.spawn(["infilld", "--log-level", "debug"], env=env, cwd=home, stderr=errlog)
    try:
        lsp_session(c, {"validate": False, "candidates": 1, "steps": 2})
        docs = {
            "private": (f"file://{home}/private/x.py", "python", "def f():\n    return \n"),
            "secret": (f"file://{home}/a.secret.py", "python", "def f():\n    return \n"),
            "markdown": (f"file://{home}/notes.md", "markdown", "# notes\n\nsome \n"),
            "control": (f"file://{home}/plain.py", "python", "def f():\n    return \n"),
        }
        for k, (uri, lang, body) in docs.items():
            c.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": lang,
                                                                "version": 1, "text": body}})
            line = body.split("\n").index(body.split("\n")[-2])
            r = c.request("textDocument/inlineCompletion", {
                "textDocument": {"uri": uri}, "position": {"line": line, "character": len(body.split("\n")[line])},
                "context": {"triggerKind": 1}}, timeout=60)
            items = r if isinstance(r, list) else (r or {}).get("items", [])
            if k != "control":
                check(items == [], f"config: {k} buffer: no items ({len(items)})")
        lsp_finish(c, "config")
        check(c.wait_exit() == 0, "config: exit 0")
    finally:
        c.close()
    errlog.seek(0)
    log = errlog.read()
    for k, (uri, _, _) in docs.items():
        excluded = f"{uri} is excluded" in log
        check(excluded == (k != "control"),
              f"config: {k} buffer {'is' if excluded else 'is not'} kept from the model "
              f"(exclude {conf['exclude']}, languages {conf['languages']})")


def test_vscode(sn):
    exe = os.path.abspath(need_env("INFILLD_BIN"))
    model = os.path.abspath(need_env("INFILLD_TINY_MODEL"))
    out = need_env("INFILLD_VSCODE_OUT")
    manifest = json.load(open(os.path.join(REPO, "editors", "vscode", "package.json")))
    props = manifest["contributes"]["configuration"]["properties"]
    text = sn["vscode-settings"].replace("/usr/local/bin/infilld", exe)
    text = text.replace("/models/Dream-Coder-v0-Instruct-7B", model)
    settings = json.loads(text)
    types = {"string": str, "number": (int, float), "boolean": bool, "array": list}
    for k, v in settings.items():
        if not check(k in props, f"vscode: {k} is a setting of the extension"):
            continue
        sch = props[k]
        ok = isinstance(v, types[sch["type"]]) and ("enum" not in sch or v in sch["enum"])
        check(ok, f"vscode: {k} = {json.dumps(v)} fits its schema")
    node = shutil.which("node")
    if not node:
        die("no node on PATH")
    js = os.path.join(out, "src", "settings.js")
    if not os.path.exists(js):
        die(f"no compiled settings.js in {out} (editors_vscode_check compiles it)")
    code = ("const s=require(process.argv[1]);const v=JSON.parse(process.argv[2]);"
            "const r=s.readSettings((k)=>v['infilld.'+k]);"
            "process.stdout.write(JSON.stringify({bin:s.resolveBinary(r.path,process.env.PATH,()=>true,'/'),"
            "args:s.serverArgs(r),init:s.initializationOptions(r)}))")
    p = subprocess.run([node, "-e", code, js, json.dumps(settings)], capture_output=True, text=True,
                       timeout=60)
    if not check(p.returncode == 0, f"vscode: the extension's settings module reads the block {p.stderr[:500]}"):
        return
    d = json.loads(p.stdout)
    check(d["bin"] == exe, f"vscode: infilld.path resolves to the daemon ({d['bin']})")
    home = new_home("vscode")
    c = Client.spawn([d["bin"], *d["args"]], env=base_env(home), cwd=home)
    try:
        r = lsp_session(c, d["init"])
        check(r["capabilities"].get("inlineCompletionProvider") is True, "vscode: the daemon serves")
        st = c.wait_notification("infilld/status", lambda p: p.get("state") in ("ready", "error", "none"),
                                 timeout=90)
        check(st.get("state") == "ready" and st.get("model", "") and model.endswith(os.path.basename(st["model"])),
              f"vscode: the model from infilld.modelPath is ready: {st}")
        lsp_finish(c, "vscode")
        check(c.wait_exit() == 0, "vscode: exit 0")
    finally:
        c.close()


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("nvim", "vscode", "config", "running"):
        print(__doc__)
        sys.exit(2)
    sn = snippets()
    {"nvim": test_nvim, "vscode": test_vscode, "config": test_config, "running": test_running}[sys.argv[1]](sn)
    print("FAILED: %d" % failures if failures else "OK", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
