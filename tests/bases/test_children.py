"""children.py with real processes and real signals: a graceful stop that never ends is cut at
the bound, a second signal ends the process at once, and an owned process group dies with its
owner even when the owner is SIGKILLed (the watchdog)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.helpers import still_alive

pytestmark = pytest.mark.e2e

OWNER = textwrap.dedent('''
    import asyncio, subprocess, sys
    from loopwright.children import Ending, own

    async def main() -> None:
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        own(child.pid, "a test's sleeper")
        Ending(lambda signum: None, bound=float(sys.argv[1])).install()  # a stop that never ends
        print(child.pid, flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
''')


def owner(bound: float) -> tuple[subprocess.Popen[str], int]:
    p = subprocess.Popen([sys.executable, "-c", OWNER, str(bound)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    assert p.stdout is not None
    return p, int(p.stdout.readline())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_that_never_ends_is_cut_at_the_bound(sig: int) -> None:
    p, child = owner(1.0)
    start = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    took = time.monotonic() - start
    assert p.returncode == 128 + sig, err
    # The bound: not at once, and not never (the stop never ends). The message names the 1 s; the
    # upper margin is for a loaded machine, where the exit itself may take seconds to be scheduled.
    assert 0.9 < took < 20, took
    assert "the graceful stop did not end within 1 s; ending 1 process group(s)" in err
    assert not still_alive([child]), "the owned process group outlived its owner"


def test_a_second_signal_ends_it_at_once() -> None:
    p, child = owner(120.0)
    p.send_signal(signal.SIGHUP)
    time.sleep(0.3)
    assert p.poll() is None  # the first one waits for the (never ending) graceful stop
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)  # at once: not after the 120 s bound (the margin: a loaded machine)
    assert p.returncode == 128 + signal.SIGHUP  # the first signal is the reason
    # what happened, not a bound that did not pass (a storm of signals read as a stuck stop)
    assert "SIGHUP: a second signal (SIGTERM) came before the graceful stop ended; ending 1 process group(s)" in err
    assert not still_alive([child])


def test_an_owned_group_dies_with_a_sigkilled_owner() -> None:
    p, child = owner(120.0)
    os.kill(p.pid, signal.SIGKILL)  # no handler, no atexit: only the watchdog is left to do it
    p.communicate(timeout=30)
    assert not still_alive([child]), "the owned process group outlived a SIGKILLed owner"
