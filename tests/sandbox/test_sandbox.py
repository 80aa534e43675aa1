"""Bash in the OS sandbox (sandbox.py): an escape corpus, ordinary work, settings, the gate.

The corpus runs in bypassPermissions with the sandbox on, so the permission gate lets every
command through and only the sandbox stands in the way. Each attempt is checked on the file
system (files outside the working directories, protected paths, secrets copied anywhere),
the network (loopback TCP, UDP and unix-socket servers that count hits; nothing else is ever
contacted) and the process table (markers of processes meant to survive, a victim process
outside). These tests run as root here, so they also prove what root inside cannot do.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import loopwright as lw
from loopwright import sandbox as sbx
from loopwright.runconfig import build_run_config
from loopwright.settings import SettingsError, load_settings
from tests.helpers import loopwright_cmd

REASON = sbx.unavailable_reason()
needs_bwrap = pytest.mark.skipif(REASON is not None, reason=f"OS sandbox unavailable: {REASON}")

SECRET = "TOPSECRET-3f9a"  # in every file the sandbox must hide
API_KEY = "sk-ant-never-passed-77c1"
TOKEN = "ghp-denied-by-env-deny-5e2"


def use(i: str, command: str, **extra: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": "Bash", "input": {"command": command, **extra}}


def run_script(steps: list[dict[str, Any]], cwd: Path, **opts: Any) -> lw.ResultMessage:
    turns: list[Any] = [{"content": [b]} for b in steps] + [{"content": [{"type": "text", "text": "done"}]}]
    options = lw.AgentOptions(model=lw.ScriptedModel(turns), tools=_tools(), cwd=str(cwd), **opts)
    return lw.run("go", options)


def _tools() -> list[lw.Tool]:
    from loopwright.tools.builtin import default_tools

    return default_tools()


def results(res: lw.ResultMessage) -> dict[str, tuple[str, bool]]:
    out: dict[str, tuple[str, bool]] = {}
    for m in res.messages:
        if m["role"] != "user" or not isinstance(m["content"], list):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_result":
                c = b["content"]
                text = c if isinstance(c, str) else json.dumps(c)
                out[b["tool_use_id"]] = (text, bool(b.get("is_error")))
    return out


# --- loopback counters (never any other address) ---------------------------------------------

class Counters:
    def __init__(self, base: Path) -> None:
        self.http = 0
        self.udp = 0
        self.unix = 0
        self.abstract = 0
        counters = self

        class H(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                counters.http += 1
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"hit")

            do_POST = do_GET  # noqa: N815

            def log_message(self, *a: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.http_port = self.httpd.server_address[1]
        self.udp_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp_sock.bind(("127.0.0.1", 0))
        self.udp_port = self.udp_sock.getsockname()[1]
        self.unix_path = str(base / "agent.sock")
        self.unix_sock = socket.socket(socket.AF_UNIX)
        self.unix_sock.bind(self.unix_path)
        self.unix_sock.listen(8)
        self.abstract_name = f"loopwright-test-{os.getpid()}-{id(self)}"
        self.abs_sock = socket.socket(socket.AF_UNIX)
        self.abs_sock.bind("\0" + self.abstract_name)
        self.abs_sock.listen(8)
        self.stop = False
        for target in (self.httpd.serve_forever, self._udp, lambda: self._accept(self.unix_sock, "unix"),
                       lambda: self._accept(self.abs_sock, "abstract")):
            threading.Thread(target=target, daemon=True).start()

    def _udp(self) -> None:
        while not self.stop:
            try:
                self.udp_sock.recvfrom(4096)
            except OSError:
                return
            self.udp += 1

    def _accept(self, s: socket.socket, name: str) -> None:
        while not self.stop:
            try:
                c, _ = s.accept()
            except OSError:
                return
            setattr(self, name, getattr(self, name) + 1)
            c.close()

    def total(self) -> dict[str, int]:
        return {"http": self.http, "udp": self.udp, "unix": self.unix, "abstract": self.abstract}

    def close(self) -> None:
        self.stop = True
        self.httpd.shutdown()
        for s in (self.udp_sock, self.unix_sock, self.abs_sock):
            s.close()


def cmdlines() -> list[str]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                out.append(Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return out


def tree_text(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, str]:
    out = {}
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink() and not any(p == s or s in p.parents for s in skip):
            try:
                out[str(p)] = p.read_text(errors="replace")
            except OSError:
                pass
    return out


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with make_world(tmp_path) as w:
        yield w


@contextlib.contextmanager
def make_world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """proj (the working directory, a git repo with secrets) and `outside`, on the real root
    file system (/var/tmp, not the sandbox's private /tmp), with loopback counters."""
    outside = Path(tempfile.mkdtemp(prefix="loopwright-sbx-", dir="/var/tmp"))
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    (proj / "secrets").mkdir()
    (proj / "secrets" / "key").write_text(f"{SECRET} in proj\n")
    (proj / ".env").write_text(f"TOKEN={SECRET}\n")
    (proj / ".bashrc").write_text("# rc\n")
    (proj / "notes.txt").write_text("hello\n")
    (outside / "target.txt").write_text("original\n")
    (outside / "secret_dir").mkdir()
    (outside / "secret_dir" / "id_rsa").write_text(f"{SECRET} outside\n")
    (outside / "rule_secret").mkdir()
    (outside / "rule_secret" / "key").write_text(f"{SECRET} by rule\n")
    counters = Counters(outside)
    victim = subprocess.Popen(["sleep", "4242.5"], start_new_session=True)
    try:
        yield {"proj": proj, "outside": outside, "counters": counters, "victim": victim}
    finally:
        counters.close()
        victim.kill()
        victim.wait()
        shutil.rmtree(outside, ignore_errors=True)


def corpus(w: dict[str, Any]) -> list[tuple[str, str]]:
    o: Path = w["outside"]
    p: Path = w["proj"]
    c: Counters = w["counters"]
    port, uport, vpid = c.http_port, c.udp_port, w["victim"].pid
    tgt = o / "target.txt"
    hidden_py = base64.b64encode(str(o / "secret_dir" / "id_rsa").encode()).decode()
    rule_py = base64.b64encode(str(o / "rule_secret" / "key").encode()).decode()
    py = sys.executable
    return [
        # writes outside the working directories
        ("w-redirect", f"echo ESCAPED-w-redirect > {tgt}"),
        ("w-append", f"echo ESCAPED-w-append >> {tgt}"),
        ("w-newfile", f"echo ESCAPED-w-newfile > {o}/new.txt"),
        ("w-cp", f"echo ESCAPED-w-cp > mine.txt && cp mine.txt {o}/"),
        ("w-mv", f"echo ESCAPED-w-mv > mv.txt && mv mv.txt {o}/moved.txt"),
        ("w-python", f"{py} -c \"open('{tgt}','w').write('ESCAPED-w-python')\""),
        ("w-rm", f"rm -f {tgt}"),
        ("w-tee", f"echo ESCAPED-w-tee | tee {o}/tee.txt"),
        ("w-dotdot", f"cd {p} && echo ESCAPED-w-dotdot > ../../../../../../..{o}/dotdot.txt"),
        ("w-etc", "echo ESCAPED-w-etc > /etc/loopwright-escaped"),
        # symlink, hard-link and /proc/self/root tricks
        ("l-symlink-write", f"ln -s {tgt} lnk && echo ESCAPED-l-symlink-write > lnk"),
        ("l-symlink-dir", f"ln -s {o} odir && echo ESCAPED-l-symlink-dir > odir/via-link.txt"),
        ("l-symlink-read", f"ln -s {o}/secret_dir/id_rsa s1 && cat s1"),
        ("l-hardlink-out", f"ln {tgt} hard.txt && echo ESCAPED-l-hardlink-out >> hard.txt"),
        ("l-hardlink-secret", "ln secrets/key hard2 && cat hard2"),
        ("l-proc-root", f"echo ESCAPED-l-proc-root > /proc/self/root{tgt}"),
        # (the root word in a variable: the gate's realpath of /proc/1/root fails closed, see report)
        ("l-proc-1-root", f"r=root; cat /proc/1/$r{o}/secret_dir/id_rsa; echo ESCAPED-l-proc-1-root > /proc/1/$r{tgt}"),
        # reads of denied paths, directly and in bulk
        ("r-cat", "cat secrets/key .env"),
        ("r-cat-outside", f"cat {o}/secret_dir/id_rsa"),
        ("r-grep", f"grep -r {SECRET[:9]} . {o}"),
        ("r-find", f"find . {o} -type f -exec cat {{}} +"),
        ("r-tar", f"tar cf - secrets {o}/secret_dir 2>/dev/null | tar xOf -"),
        ("r-cp", f"cp -r secrets stolen; cp {o}/secret_dir/id_rsa stolen2; cat stolen/* stolen2"),
        ("r-python", f"{py} -c \"import base64;print(open(base64.b64decode('{hidden_py}').decode()).read())\""),
        ("r-rule", f"{py} -c \"import base64;print(open(base64.b64decode('{rule_py}').decode()).read())\""),
        ("r-git", "git add -f secrets/key .env && git show :secrets/key :.env"),
        ("r-mv-mask", "mv secrets s2; cat s2/key"),
        ("r-umount", "umount secrets; umount -l .env; cat secrets/key .env"),
        # protected paths inside the working directory
        ("p-hook", "printf '#!/bin/sh\\necho ESCAPED-p-hook\\n' > .git/hooks/pre-commit"),
        ("p-config", "git config core.hooksPath /var/tmp/ESCAPED-p-config"),
        ("p-mv-git", "mv .git g2 && mkdir -p .git/hooks && echo ESCAPED-p-mv-git > .git/hooks/post-checkout"),
        ("p-bashrc", "echo 'echo ESCAPED-p-bashrc' >> .bashrc"),
        # root's powers
        ("x-remount", f"mount -o remount,rw / && echo ESCAPED-x-remount > {tgt}"),
        ("x-unshare", f"unshare -Um sh -c 'mount -o remount,rw /var/tmp; echo ESCAPED-x-unshare > {tgt}'"),
        ("x-sysctl", "cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern && echo ESCAPED-x-sysctl"),
        ("x-mknod", "mknod disk b 8 0 && echo ESCAPED-x-mknod"),
        ("x-chroot", f"chroot / sh -c 'echo ESCAPED-x-chroot > {tgt}'"),
        # network
        ("n-curl-ip", f"curl -s -m 3 http://127.0.0.1:{port}/n-curl-ip"),
        ("n-curl-name", f"curl -s -m 3 http://localhost:{port}/n-curl-name"),
        ("n-devtcp", f"exec 3<>/dev/tcp/127.0.0.1/{port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3"),
        ("n-python", f"{py} -c \"import urllib.request as u;print(u.urlopen('http://127.0.0.1:{port}/',timeout=3).read())\""),
        ("n-udp", f"echo hit > /dev/udp/127.0.0.1/{uport}"),
        ("n-dns", f"{py} -c \"import socket;s=socket.socket(2,2);s.sendto(b'\\x12\\x34\\x01\\x00\\x00\\x01'+b'\\x00'*6+b'\\x07example\\x03com\\x00\\x00\\x01\\x00\\x01',('127.0.0.1',{uport}))\""),
        ("n-unix", f"{py} -c \"import socket;s=socket.socket(socket.AF_UNIX);s.connect('{c.unix_path}')\""),
        ("n-curl-unix", f"curl -s -m 3 --unix-socket {c.unix_path} http://x/"),
        ("n-abstract", f"{py} -c \"import socket;s=socket.socket(socket.AF_UNIX);s.connect('\\0{c.abstract_name}')\""),
        # processes that try to outlive the command, and signals to processes outside
        ("s-setsid", "setsid sleep 4301.5 >/dev/null 2>&1 < /dev/null &"),
        ("s-nohup", "nohup sleep 4302.5 >/dev/null 2>&1 &"),
        ("s-double-fork", "(sleep 4303.5 >/dev/null 2>&1 &) ; true"),
        ("s-daemon", f"{py} -c \"import os,time\nif os.fork(): os._exit(0)\nos.setsid()\nif os.fork(): os._exit(0)\ntime.sleep(4304.5)\" &"),
        ("s-disown", "sleep 4305.5 & disown"),
        ("k-kill", f"kill -9 {vpid}"),
        ("k-pkill", "pkill -9 -f 4242.5"),
        ("k-python", f"{py} -c \"import os,signal;os.kill({vpid},signal.SIGKILL)\""),
        ("k-ptrace", f"{py} -c \"import ctypes;print(ctypes.CDLL(None).ptrace(16,{vpid},0,0))\"; cat /proc/{vpid}/environ"),
        # the environment
        ("e-env", "env | grep -E 'ANTHROPIC|GITHUB' ; echo \"$ANTHROPIC_API_KEY $GITHUB_TOKEN\""),
    ]


def snapshot(w: dict[str, Any]) -> dict[str, Any]:
    proj = w["proj"]
    return {"outside": tree_text(w["outside"]), "git_config": (proj / ".git" / "config").read_text(),
            "hooks": sorted(os.listdir(proj / ".git" / "hooks")),
            "core_pattern": Path("/proc/sys/kernel/core_pattern").read_text()}


def find_escapes(w: dict[str, Any], before: dict[str, Any], out: dict[str, tuple[str, bool]]) -> dict[str, str]:
    """What got past the box, keyed by what it was (the attempt's id where it is known):
    the file system, the network counters and the process table."""
    proj, outside, counters = w["proj"], w["outside"], w["counters"]
    escapes: dict[str, str] = {}
    after = tree_text(outside)
    for path, text in after.items():
        if before["outside"].get(path) != text:
            escapes[f"changed {path}"] = text
    for path in before["outside"]:
        if path not in after:
            escapes[f"removed {path}"] = ""
    for i, (t, _) in out.items():
        if SECRET in t:
            escapes[f"{i} read a secret"] = t
        if API_KEY in t or TOKEN in t:
            escapes[f"{i} saw a credential"] = t
        if i in ("x-sysctl", "x-mknod") and f"ESCAPED-{i}" in t:
            escapes[i] = t
    for path, text in tree_text(proj, skip=(proj / "secrets", proj / ".env", proj / ".git" / "objects")).items():
        if SECRET in text:  # a secret copied into the working directory
            escapes[f"{path} in the working directory"] = text
    if not (proj / ".git" / "config").exists() or (proj / ".git" / "config").read_text() != before["git_config"]:
        escapes["p-config / p-mv-git"] = "changed .git/config"
    if not (proj / ".git" / "hooks").is_dir() or sorted(os.listdir(proj / ".git" / "hooks")) != before["hooks"]:
        escapes["p-hook / p-mv-git"] = str(os.listdir(proj))
    if (proj / ".bashrc").read_text() != "# rc\n":
        escapes["p-bashrc"] = (proj / ".bashrc").read_text()
    if Path("/etc/loopwright-escaped").exists():
        escapes["w-etc"] = "/etc/loopwright-escaped"
    if Path("/proc/sys/kernel/core_pattern").read_text() != before["core_pattern"]:
        escapes["x-sysctl"] = "core_pattern changed"
    if any(counters.total().values()):
        escapes["network"] = str(counters.total())
    survivors = [c for c in cmdlines() if any(f"430{k}.5" in c for k in range(1, 6))]
    if survivors:
        escapes["survivors"] = str(survivors)
    if w["victim"].poll() is not None:
        escapes["victim killed (k-*)"] = str(w["victim"].returncode)
    return escapes


def corpus_sandbox(w: dict[str, Any]) -> dict[str, Any]:
    """The sandbox settings of the corpus run (Claude Code's schema): the masked paths."""
    return {"filesystem": {"denyRead": [f"/{w['proj']}/secrets", f"/{w['proj']}/.env", f"/{w['outside']}/secret_dir"]},
            "env": {"deny": ["GITHUB_TOKEN"]}}


@pytest.mark.e2e
@needs_bwrap
def test_escape_corpus_zero_escapes(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    attempts = corpus(world)
    assert len(attempts) >= 40
    before = snapshot(world)
    res = run_script([use(i, cmd) for i, cmd in attempts], world["proj"], permission_mode="bypassPermissions",
                     disallowed_tools=[f"Read(/{world['outside']}/rule_secret/**)"], sandbox=corpus_sandbox(world))
    time.sleep(0.3)  # anything that did escape has had time to act
    out = results(res)
    assert res.permission_denials == []  # the gate let everything through: only the sandbox stood in the way
    assert set(out) == {i for i, _ in attempts}
    escapes = find_escapes(world, before, out)
    texts = "\n".join(f"{i}: {t}" for i, (t, _) in out.items())
    assert escapes == {}, f"{len(escapes)} escapes: {escapes}\n\nresults:\n{texts}"
    # the sandbox explains what it stopped, naming the setting
    assert "sandbox.filesystem.allowWrite" in out["w-redirect"][0]
    assert "sandbox.network.allowedDomains" in out["n-curl-ip"][0]
    assert out["w-redirect"][1] and out["n-curl-ip"][1]


@pytest.mark.e2e
def test_the_checks_see_escapes_without_the_sandbox(world: dict[str, Any]) -> None:
    """The control: three harmless attempts of the corpus, run without the sandbox, are seen
    by the checks (so a 0 above is the sandbox's doing, not blind checks)."""
    picked = {i: c for i, c in corpus(world) if i in ("w-redirect", "n-curl-ip", "s-setsid")}
    # (the command waits until setsid has left the group, seen as `sleep` running (setsid execs it after
    # setsid(2)), before the group is killed: a fixed 0.5 s could pass on a loaded machine before the
    # child even ran, the kill came first and the control missed it. `^sleep`: not this shell's own line)
    picked["s-setsid"] += " for i in $(seq 600); do pgrep -f '^sleep 4301[.]5' >/dev/null && break; sleep 0.05; done"
    before = snapshot(world)
    try:
        out = results(run_script([use(i, c) for i, c in picked.items()], world["proj"],
                                 permission_mode="bypassPermissions"))
        time.sleep(0.3)
        escapes = find_escapes(world, before, out)
        assert set(escapes) == {f"changed {world['outside'] / 'target.txt'}", "network", "survivors"}
    finally:
        subprocess.run(["pkill", "-f", "sleep 4301.5"])


@pytest.mark.e2e
@needs_bwrap
def test_ordinary_work_inside_the_box(world: dict[str, Any]) -> None:
    proj = world["proj"]
    (proj / "test_calc.py").write_text("def test_add():\n    assert 1 + 1 == 2\n")
    (proj / "hello.c").write_text('#include <stdio.h>\nint main(void){puts("built ok");return 0;}\n')
    steps = [
        use("write", "echo made > made.txt && mkdir -p build/x && echo y > build/x/y && cat made.txt"),
        use("tests", f"{sys.executable} -m pytest -q -p no:cacheprovider test_calc.py"),
        use("git", "git add made.txt test_calc.py && git -c user.email=a@b -c user.name=n commit -qm work "
                   "&& git log --oneline | wc -l"),
        use("tmp", "echo t > /tmp/scratch && cat /tmp/scratch && mktemp"),
        use("tar", "tar czf build.tgz build && tar tzf build.tgz | wc -l"),
        use("cd", "cd build && pwd"),
        use("cwd-kept", "pwd"),
    ]
    if shutil.which("cc"):
        steps.append(use("build", "cd .. && cc -o hello hello.c && ./hello"))
    res = run_script(steps, proj, permission_mode="bypassPermissions", sandbox=True)
    out = results(res)
    errors = {i: t for i, (t, e) in out.items() if e}
    assert errors == {}
    assert (proj / "made.txt").read_text() == "made\n" and (proj / "build.tgz").exists()
    assert "1 passed" in out["tests"][0]
    assert subprocess.run(["git", "-C", str(proj), "log", "--oneline"], capture_output=True,
                          text=True).stdout.count("\n") == 1
    assert out["cwd-kept"][0].strip() == str(proj / "build")  # cd persists between sandboxed calls
    if "build" in out:
        assert out["build"][0].strip() == "built ok"
    assert not Path("/tmp/scratch").exists() or Path("/tmp/scratch").read_text() != "t\n"  # a private /tmp


@pytest.mark.e2e
@needs_bwrap
def test_background_shell_and_its_survivors_end_with_killshell(world: dict[str, Any]) -> None:
    proj = world["proj"]
    steps = [use("bg", "setsid sleep 4311.5 & sleep 4312.5", run_in_background=True),
             use("wait", "sleep 0.5"),
             {"type": "tool_use", "id": "kill", "name": "KillShell", "input": {"shell_id": "bash_1"}}]
    res = run_script(steps, proj, permission_mode="bypassPermissions", sandbox=True)
    assert not results(res)["kill"][1]
    deadline = time.monotonic() + 30  # (a wait: the kill is sent, not waited for)
    while any("4311.5" in c or "4312.5" in c for c in cmdlines()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any("4311.5" in c or "4312.5" in c for c in cmdlines())


@pytest.mark.e2e
@needs_bwrap
def test_allowed_domains_pass_through_the_proxy_and_nothing_else(world: dict[str, Any]) -> None:
    proj, counters = world["proj"], world["counters"]
    port = counters.http_port
    # NO_PROXY keeps localhost for the sandbox's own loopback; these commands send it to the
    # proxy, which reaches the host's (the only allowed name here that is loopback-only).
    via = "env -u NO_PROXY -u no_proxy"
    steps = [
        use("allowed", f"{via} curl -s -m 5 http://localhost:{port}/ok"),
        use("allowed-py", f"{via} {sys.executable} -c \"import urllib.request as u;"
                          f"print(u.urlopen('http://localhost:{port}/py',timeout=5).read())\""),
        use("not-allowed", f"{via} curl -s -m 5 -w ' %{{http_code}}' http://127.0.0.1:{port}/no"),
        use("no-proxy", f"curl -s -m 3 --noproxy '*' http://localhost:{port}/direct"),
        use("unix-still-blocked", f"{sys.executable} -c \"import socket;"
                                  f"socket.socket(socket.AF_UNIX).connect('{counters.unix_path}')\""),
    ]
    res = run_script(steps, proj, permission_mode="bypassPermissions",
                     sandbox={"network": {"allowedDomains": ["localhost"]}})
    out = results(res)
    assert out["allowed"] == ("hit", False)
    assert "b'hit'" in out["allowed-py"][0]
    assert "403" in out["not-allowed"][0] and "not in sandbox.network.allowedDomains" in out["not-allowed"][0]
    assert out["no-proxy"][1] and out["unix-still-blocked"][1]
    assert counters.http == 2 and counters.unix == 0


@pytest.mark.e2e
@needs_bwrap
def test_allow_local_binding_servers_listen_and_host_loopback_is_reached(world: dict[str, Any]) -> None:
    """false (the default): no server may listen inside and the host's loopback server counts no
    hit; true: a server listens and answers inside, and the host's loopback server is reached
    (each hit counted), with and without the allowedDomains proxy bridge beside it."""
    proj, counters = world["proj"], world["counters"]
    serve = (f"{sys.executable} -c \"import socket;s=socket.socket();s.bind(('127.0.0.1',0));s.listen();"
             "c=socket.create_connection(s.getsockname());a,_=s.accept();c.send(b'ping');print('served',a.recv(4))\"")
    udp = f"{sys.executable} -c \"import socket;socket.socket(2,2).sendto(b'x',('127.0.0.1',{counters.udp_port}))\""
    steps = [use("serve", serve), use("host", f"curl -s -m 3 http://127.0.0.1:{counters.http_port}/lb"),
             use("host-py", f"{sys.executable} -c \"import urllib.request as u;"
                            f"print(u.urlopen('http://localhost:{counters.http_port}/',timeout=3).read())\""),
             use("udp", udp)]
    hits: list[int] = []
    for net in ({}, {"allowLocalBinding": False, "allowedDomains": ["pypi.org"]},
                {"allowLocalBinding": True}, {"allowLocalBinding": True, "allowedDomains": ["pypi.org"]}):
        before = counters.http
        out = results(run_script(steps, proj, permission_mode="bypassPermissions", sandbox={"network": net}))
        hits.append(counters.http - before)
        if net.get("allowLocalBinding"):
            assert out["serve"] == ("served b'ping'", False), net
            assert out["host"] == ("hit", False) and "b'hit'" in out["host-py"][0], net
        else:
            assert out["serve"][1] and "Operation not permitted" in out["serve"][0], net
            assert "sandbox.network.allowLocalBinding allows it" in out["serve"][0]
            assert out["host"][1] and out["host-py"][1], net
    assert hits == [0, 0, 2, 2]
    assert counters.udp == 0  # only the TCP servers listening on the host's loopback are forwarded


@pytest.mark.e2e
@needs_bwrap
def test_grep_rg_runs_sandboxed(world: dict[str, Any]) -> None:
    if shutil.which("rg") is None:
        pytest.skip("ripgrep (rg) is not installed")
    proj = world["proj"]
    (proj / "visible.txt").write_text(f"{SECRET} not denied\n")
    grep = {"type": "tool_use", "id": "g", "name": "Grep",
            "input": {"pattern": SECRET, "path": str(proj), "output_mode": "content"}}
    plain = results(run_script([grep], proj, permission_mode="bypassPermissions"))
    boxed = results(run_script([grep], proj, permission_mode="bypassPermissions",
                               sandbox={"filesystem": {"denyRead": ["./secrets"]}}))
    assert "secrets/key" in plain["g"][0]  # the control: without the sandbox rg finds it
    assert "secrets/key" not in boxed["g"][0] and "visible.txt" in boxed["g"][0]
    # with a network bridge configured, rg still runs (without the bridge: it needs no network)
    net = {"filesystem": {"denyRead": ["./secrets"]},
           "network": {"allowedDomains": ["pypi.org"], "allowLocalBinding": True}}
    assert results(run_script([grep], proj, permission_mode="bypassPermissions", sandbox=net)) == boxed
    from loopwright.runconfig import build_run_config

    sb = build_run_config(lw.AgentOptions(sandbox=net), proj).sandbox
    assert sb is not None and sys.executable not in sb.wrap(["rg"], proj, None, network=False).argv
    assert sys.executable in sb.wrap(["true"], proj, None).argv  # Bash gets the bridge


# --- the gate ------------------------------------------------------------------------------------

@needs_bwrap
def test_auto_allow_when_sandboxed_deny_rules_still_apply_excluded_commands_are_gated(tmp_path: Path) -> None:
    steps = [use("a", "echo hi > f.txt && rm f.txt && echo fine"),
             use("d", "curl -s http://localhost:1/"),
             use("x", "docker ps")]
    res = run_script(steps, tmp_path, permission_mode="default", disallowed_tools=["Bash(curl *)"],
                     sandbox={"excludedCommands": ["docker"]})
    out = results(res)
    assert out["a"] == ("fine", False)  # no approval asked: it ran sandboxed
    assert out["d"][1] and "deny rule" in out["d"][0]
    assert out["x"][1] and "needs approval" in out["x"][0]  # outside the sandbox: the normal gate
    off = results(run_script(steps[:1], tmp_path, permission_mode="default",
                             sandbox={"autoAllowBashIfSandboxed": False}))
    assert off["a"][1] and "needs approval" in off["a"][0]


@needs_bwrap
def test_excluded_command_runs_outside_the_sandbox(tmp_path: Path) -> None:
    outside = Path(tempfile.mkdtemp(prefix="loopwright-sbx-", dir="/var/tmp"))
    try:
        steps = [use("in", f"touch {outside}/in"), use("out", f"touch {outside}/out"),
                 use("compound", f"touch {outside}/x && touch {outside}/compound")]
        res = run_script(steps, tmp_path, permission_mode="bypassPermissions",
                         sandbox={"excludedCommands": [f"touch {outside}/out", f"touch {outside}/x"]})
        out = results(res)
        assert out["in"][1] and not (outside / "in").exists()
        assert not out["out"][1] and (outside / "out").exists()
        assert not (outside / "compound").exists()  # only a single plain command leaves the box
    finally:
        shutil.rmtree(outside)


@needs_bwrap
def test_dangerously_disable_sandbox_asks_and_allow_unsandboxed_false_ignores_it(tmp_path: Path) -> None:
    """allowUnsandboxedCommands (Claude Code's default: true): a call with dangerouslyDisableSandbox
    runs outside the sandbox after the normal gate (it asks, autoAllowBashIfSandboxed does not
    apply, nor does bypassPermissions); false: the flag is ignored, the call runs sandboxed
    (and needs no approval)."""
    outside = Path(tempfile.mkdtemp(prefix="loopwright-sbx-", dir="/var/tmp"))
    asked: list[str] = []

    def approve(name: str, inp: dict[str, Any], *_: Any) -> bool:
        asked.append(inp["command"])
        return True

    try:
        esc = {"dangerouslyDisableSandbox": True}
        steps = [use("boxed", f"touch {outside}/boxed"), use("escape", f"touch {outside}/escape", **esc),
                 use("bg", f"touch {outside}/bg {tmp_path}/bg-ran", run_in_background=True, **esc),
                 # (until the background touch has run, seen in the project the box shows, not a fixed
                 # 0.3 s a loaded machine can pass before it ran)
                 use("wait", f"for i in $(seq 600); do [ -e {tmp_path}/bg-ran ] && break; sleep 0.05; done")]
        out = results(run_script(steps, tmp_path, permission_mode="default", can_use_tool=approve, sandbox={}))
        assert out["boxed"][1] and "dangerouslyDisableSandbox: true" in out["boxed"][0]  # the hint
        assert not out["escape"][1] and (outside / "escape").exists() and (outside / "bg").exists()
        assert asked == [f"touch {outside}/escape", f"touch {outside}/bg {tmp_path}/bg-ran"]  # only the escapes asked
        assert not (outside / "boxed").exists()
        # without a way to ask (-p), the escape is refused, not run
        refused = results(run_script(steps[1:2], tmp_path, permission_mode="default", sandbox={}))
        assert refused["escape"][1] and "needs approval" in refused["escape"][0]
        (outside / "escape").unlink()
        (outside / "bg").unlink()
        # bypassPermissions frees the agent inside the box, not out of it: leaving is asked too
        asked.clear()
        out = results(run_script(steps[1:2], tmp_path, permission_mode="bypassPermissions", can_use_tool=approve,
                                 sandbox={}))
        assert asked == [f"touch {outside}/escape"] and not out["escape"][1]
        (outside / "escape").unlink()
        refused = results(run_script(steps[1:2], tmp_path, permission_mode="bypassPermissions", sandbox={}))
        assert refused["escape"][1] and "sandbox.allowUnsandboxedCommands" in refused["escape"][0]
        assert not (outside / "escape").exists()
        # false: ignored, even in bypassPermissions; sandboxed, so no approval is asked either
        asked.clear()
        off = {"allowUnsandboxedCommands": False}
        for mode in ("bypassPermissions", "default"):
            out = results(run_script(steps, tmp_path, permission_mode=mode, can_use_tool=approve, sandbox=off))
            assert out["escape"][1] and "dangerouslyDisableSandbox was ignored" in out["escape"][0]
            assert "dangerouslyDisableSandbox was ignored" in out["bg"][0]
            assert "dangerouslyDisableSandbox: true" not in out["boxed"][0]  # no hint to use it
        assert asked == [] and sorted(os.listdir(outside)) == []
    finally:
        shutil.rmtree(outside)


# --- settings and start-up -----------------------------------------------------------------------

@pytest.mark.parametrize("bad, key", [
    ({"enabled": "yes"}, "sandbox.enabled"),
    ({"enabeld": True}, "sandbox.enabeld"),
    ({"network": {"allowedDomains": ["https://pypi.org/simple"]}}, "sandbox.network.allowedDomains"),
    ({"network": {"allowedDomains": "pypi.org"}}, "sandbox.network.allowedDomains"),
    ({"network": {"allowUnixSockets": ["/var/run/docker.sock"]}}, "sandbox.network.allowUnixSockets"),
    ({"filesystem": {"denyRead": [3]}}, "sandbox.filesystem.denyRead"),
    ({"env": {"deny": "X"}}, "sandbox.env.deny"),
    ([], "sandbox must be an object"),
])
def test_invalid_sandbox_settings_name_the_key(tmp_path: Path, bad: Any, key: str) -> None:
    (tmp_path / ".loopwright").mkdir()
    (tmp_path / ".loopwright" / "settings.json").write_text(json.dumps({"sandbox": bad}))
    with pytest.raises(SettingsError, match=key.replace(".", r"\.")):
        load_settings(tmp_path, ["project"])
    with pytest.raises(SettingsError, match=key.replace(".", r"\.")):  # the same through AgentOptions
        build_run_config(lw.AgentOptions(sandbox=bad), tmp_path)


def test_claude_code_keys_are_read(tmp_path: Path) -> None:
    s = load_settings(tmp_path, [], extra={"sandbox": {
        "enabled": True, "autoAllowBashIfSandboxed": False, "excludedCommands": ["docker"],
        "allowUnsandboxedCommands": False, "ignoreViolations": {}, "failIfUnavailable": False,
        "network": {"allowedDomains": ["*.GitHub.com", "pypi.org", "10.0.0.1"], "allowLocalBinding": True,
                    "httpProxyPort": 8080},
        "filesystem": {"allowWrite": ["//var/tmp/x"], "denyRead": ["~/.aws"], "denyWrite": ["./ro"]}}})
    c = s.sandbox
    assert c is not None and c.enabled and not c.auto_allow and not c.fail_if_unavailable
    assert not c.allow_unsandboxed and c.allow_local_binding and sbx.SandboxConfig().allow_unsandboxed
    assert c.allowed_domains == ["*.github.com", "pypi.org", "10.0.0.1"]
    assert c.allow_write == [Path("/var/tmp/x")] and c.deny_read == [Path.home() / ".aws"]
    assert c.deny_write == [tmp_path.resolve() / "ro"]
    assert sbx.domain_allowed("api.github.com", c.allowed_domains)
    assert not sbx.domain_allowed("github.com.evil.net", c.allowed_domains)
    assert not sbx.domain_allowed("github.com", c.allowed_domains)


def test_unavailable_sandbox_refuses_to_start_or_warns_loudly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sbx._PROBE, "r", f"bubblewrap (bwrap) is not installed: {sbx.INSTALL_HINT}")
    with pytest.raises(SettingsError, match="apt-get install bubblewrap.*failIfUnavailable"):
        build_run_config(lw.AgentOptions(sandbox=True), tmp_path)
    with pytest.warns(sbx.SandboxInactiveWarning, match="WARNING: the OS sandbox is NOT active"):
        cfg = build_run_config(lw.AgentOptions(sandbox={"failIfUnavailable": False}), tmp_path)
    assert cfg.sandbox is None
    with pytest.warns(sbx.SandboxInactiveWarning):  # every run that goes unsandboxed says so
        build_run_config(lw.AgentOptions(sandbox={"failIfUnavailable": False}), tmp_path)
    assert capsys.readouterr().err == ""  # the library warns; it does not print


@pytest.mark.e2e
def test_cli_sandbox_flag_refuses_clearly_when_unavailable(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([[{"type": "text", "text": "hi"}]]))
    env = {**os.environ, "PATH": "/nonexistent"}  # no bwrap (nor anything else) on PATH
    p = subprocess.run([*loopwright_cmd(), "-p", "hi", "--model", f"scripted:{script}",
                        "--sandbox"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert "bubblewrap" in p.stderr and "failIfUnavailable" in p.stderr


def test_root_gets_no_capabilities_in_the_box() -> None:
    flags = sbx._ns_flags(True)
    assert "--die-with-parent" in flags and "--unshare-pid" in flags and "--unshare-net" in flags
    if os.geteuid() == 0:
        assert flags[-3:] == ["--unshare-user", "--cap-drop", "ALL"]


def test_seccomp_program_shape() -> None:
    prog = sbx.seccomp_program()
    if prog is None:
        pytest.skip("no seccomp filter for this architecture")
    assert len(prog) % 8 == 0 and len(prog) // 8 == 13
    assert len(sbx.seccomp_program(listen=True) or b"") // 8 == 14  # + listen()
    assert len(sbx.seccomp_program(unix=False, listen=True, base=False) or b"") // 8 == 7  # the bridge's own


# --- no Bash command outlives a SIGKILLed loopwright (issue 9 item 13) -------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("sandboxed", [False, pytest.param(True, marks=needs_bwrap)])
def test_sigkill_of_loopwright_leaves_no_bash_command_alive(tmp_path: Path, sandboxed: bool) -> None:
    mark = "4401.5" if sandboxed else "4402.5"
    turns = [[use("t1", f"nohup sleep {mark}1 >/dev/null 2>&1 & (sleep {mark}2 &); sleep {mark}3")],
             [{"type": "text", "text": "never"}]]
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns))
    args = [*loopwright_cmd(), "-p", "go", "--model", f"scripted:{script}", "--permission-mode", "bypassPermissions",
            "--no-session-persistence", *(["--sandbox"] if sandboxed else [])]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while sum(f"{mark}{k}" in c for c in cmdlines() for k in (1, 2, 3)) < 3:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the command did not start"
            time.sleep(0.02)
        time.sleep(0.5)  # mid-command (it would sleep for an hour)
        os.kill(proc.pid, signal.SIGKILL)  # only loopwright: no atexit, no cleanup of its own
        proc.wait(timeout=10)
        deadline = time.monotonic() + 30  # (a wait: the watchdog's kill is sent, not waited for)
        while any(mark in c for c in cmdlines()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [c for c in cmdlines() if mark in c] == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for c in cmdlines():
            if mark in c:
                subprocess.run(["pkill", "-f", mark])


# --- sync handlers in a worker thread ------------------------------------------------------------

@pytest.mark.parametrize("read_only", [False, True])
def test_slow_sync_tool_does_not_block_an_interrupt(read_only: bool) -> None:
    gate = threading.Event()
    started = threading.Event()

    def slow(inp: dict[str, Any]) -> str:
        started.set()
        gate.wait(60)  # a blocking handler: on the event loop it would freeze the interrupt
        return "late"

    tool = lw.Tool("Slow", "slow", {"type": "object", "properties": {}}, slow, read_only=read_only)
    model = lw.ScriptedModel([[{"type": "tool_use", "id": "s", "name": "Slow", "input": {}}],
                              [{"type": "text", "text": "after"}]])

    async def go() -> float:
        async with lw.LoopwrightClient(lw.AgentOptions(model=model, tools=[tool])) as c:
            await c.query("go")
            while not started.is_set():
                await asyncio.sleep(0.01)
            t0 = time.monotonic()
            c.interrupt()
            msgs = [m async for m in c.receive_response()]
            took = time.monotonic() - t0
            res = msgs[-1]
            assert isinstance(res, lw.ResultMessage) and res.subtype == "error_during_execution"
            return took

    try:
        took = asyncio.run(go())
    finally:
        gate.set()
    assert took < 30  # not the handler's 60 s: the event loop stayed free (the margin: a loaded machine)


def test_run_in_worker_results_errors_and_busy_threads() -> None:
    from loopwright.threads import run_in_worker

    def boom() -> None:
        raise ValueError("boom")

    async def go() -> None:
        for wait in (0.0, 0.001):
            assert await run_in_worker(lambda: 5, wait=wait) == 5
            with pytest.raises(ValueError, match="boom"):
                await run_in_worker(boom, wait=wait)
        gate = threading.Event()
        slow = asyncio.ensure_future(run_in_worker(lambda: gate.wait(10) and "late", wait=0.001))
        ticks = 0
        while ticks < 20:  # the loop runs on while the slow call holds its thread
            await asyncio.sleep(0)
            ticks += 1
        assert not slow.done()
        assert await run_in_worker(lambda: threading.current_thread().name, wait=0.001) == "loopwright-tool"
        assert await run_in_worker(lambda: 7) == 7  # another thread: the busy one is not reused
        gate.set()
        assert await slow == "late"

    asyncio.run(go())
