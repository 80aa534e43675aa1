"""Start-up toward the floor (issue 29 item 3): the first request of `loopwright -p` loads
neither importlib.metadata nor the email package (httpcore2's __init__ wanted the first only
for its own version; the retry policy wants the second only to parse a Retry-After date), and
httpcore2 imported that way is the same module with the same version."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.project.test_startup_imports import modules_of_one_call, modules_of_sdk_call

pytestmark = pytest.mark.e2e  # subprocesses: a fresh interpreter each

SLOW_STDLIB = ("importlib.metadata", "email", "csv", "zipfile")


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_first_request_loads_no_importlib_metadata_and_no_email(provider: str, tmp_path: Path) -> None:
    loaded, requests = modules_of_one_call(provider, tmp_path)
    assert requests == 1 and "httpcore2" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in SLOW_STDLIB or m.startswith("importlib.metadata")) == []


def test_httpcore2_imported_without_importlib_metadata_is_whole() -> None:
    code = ("import json, sys\n"
            "from loopwright.models.http import import_httpcore2\n"
            "h = import_httpcore2()\n"
            "before = 'importlib.metadata' in sys.modules\n"
            "import importlib.metadata as md\n"
            "from importlib.metadata import entry_points\n"
            "print(json.dumps([h.__version__, md.version('httpcore2'), before, callable(entry_points),\n"
            "                  hasattr(md, '__path__'), import_httpcore2() is h, h.AsyncConnectionPool.__module__]))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    version, real_version, before, ok, package, same, where = json.loads(p.stdout)
    assert version == real_version and version[0].isdigit()
    assert before is False  # not loaded by the import
    assert ok and package and same and where == "httpcore2"  # the real one afterwards


def test_a_module_that_asks_importlib_metadata_for_more_meanwhile_gets_the_real_one() -> None:
    # Anything imported during httpcore2's import that wants more than version() gets it.
    code = ("import sys, types\n"
            "import loopwright.models.http as http\n"
            "real_dist = http._dist_version\n"
            "def dist(name):\n"
            "    from importlib.metadata import distribution  # another module's need, meanwhile\n"
            "    assert distribution(name).version == real_dist(name)\n"
            "    return real_dist(name)\n"
            "http._dist_version = dist\n"
            "h = http.import_httpcore2()\n"
            "import importlib.metadata as md\n"
            "print(h.__version__ == md.version('httpcore2'), type(md.distribution).__name__)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "function"]


def test_the_sdk_protocol_path_to_the_first_request_loads_neither(tmp_path: Path) -> None:
    # loopwright as the Agent SDKs' CLI (--input-format stream-json) starts a process per session
    loaded, requests = modules_of_sdk_call(tmp_path)
    assert requests == 1
    assert "httpcore2" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in SLOW_STDLIB or m.startswith("importlib.metadata")) == []
