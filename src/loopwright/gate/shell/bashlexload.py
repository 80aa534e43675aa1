"""Room: bases (under the gate). Owns loading bashlex, the shell parser under bashparse; may import nothing of loopwright.

bashlex (0.18) builds its LALR grammar tables at every import: ~0.2 s of CPU (~1e9
instructions), paid by the first Bash verdict of a process. It cannot be cached cleanly:
bashlex calls `yacc.yacc(outputdir=..., debug=False)` at the import of `bashlex.parser`, and
the ply it bundles (ply 2022) no longer writes or reads a parse-table module at all
(`write_tables`, `outputdir` and `picklefile` are accepted and ignored; the `parsetab.py`
shipped beside it is an old format that nothing reads). Any cache would have to replace
`yacc.yacc` between `bashlex.yacc`'s import and `bashlex.parser`'s, i.e. patch bashlex from an
import hook, which issue 41 removed.

So bashlex is used as it is, and the build is moved to where nobody waits for it: `warm()`
starts it in a background thread while the process is idle (a run that may call Bash asks
for it when a read from the model's server has waited a while: loop/model_call.py, idle.py).
A verdict that needs bashlex before the build is done waits for the rest of it (Python's
import lock), never builds twice.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

_warming: threading.Thread | None = None


def bashlex() -> Any:
    """bashlex, imported at the first call (or already loaded by `warm()`)."""
    import bashlex

    return bashlex


def loaded() -> bool:
    """bashlex is loaded or being loaded: `warm()` has nothing left to do."""
    return _warming is not None or "bashlex" in sys.modules


def warm() -> None:
    """Load bashlex in a daemon thread (once per process), for a caller that is idle now and
    expects a Bash verdict soon. The thread competes for the GIL only while it builds: call it
    when the process waits (on the model), not on a path someone is timing."""
    global _warming
    if loaded():
        return
    _warming = threading.Thread(target=_load, name="loopwright-bashlex", daemon=True)
    _warming.start()


def _load() -> None:
    try:
        bashlex()
    except Exception:  # the verdict that needs bashlex imports it again and reports why
        pass
