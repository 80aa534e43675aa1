"""Room: bases. Owns the work a process does while it waits on a server; may import nothing of the package.

When a read from a server has waited IDLE_S (a model thinking before it answers), the process
has nothing else to do: work that a later step would otherwise wait for can run then. The
loop asks for the Bash parser to be loaded then, for as long as a model call lasts (its
grammar tables take ~0.2 s to build at every process: loop/model_call.py,
gate/shell/bashlexload.py); the HTTP transport (models/wire.py) says when a read has waited
that long. The wait is measured where it
happens, on the socket: a process that is merely slow (under valgrind, on a loaded machine) or
busy is not idle, and a quick server never triggers it.
"""

from __future__ import annotations

from collections.abc import Callable

# A read from a server unanswered this long: the process is idle. Models take longer to their
# first byte (~1-3 s with a long prompt); a stall this long on a quick local server takes a badly
# overloaded machine (a shorter wait, 0.2 s, was reached now and then there, and under valgrind).
IDLE_S = 0.5

_work: list[Callable[[], object]] = []


def when_idle(work: Callable[[], object]) -> None:
    """Run `work` once, in the event loop, the next time a read from a server has waited
    IDLE_S (asked again while pending, it still runs once). It should be quick to start
    (a thread, say): the read goes on as soon as its data arrives."""
    if work not in _work:
        _work.append(work)


def forget(work: Callable[[], object]) -> None:
    """`work` is no longer wanted (its moment has passed: the model call it was for ended)."""
    if work in _work:
        _work.remove(work)


def pending() -> bool:
    """Some work waits for the process to be idle (the transport times its reads only then)."""
    return bool(_work)


def waited() -> None:
    """A read has waited IDLE_S: run the pending work (each piece once)."""
    work = _work[:]
    _work.clear()
    for w in work:
        w()
