"""Room: built-in tools (on tools.base). Owns NotebookEdit's implementation (tools.builtin defines the
tool); may import data types, tools.base, tools.diffs, tools.paths, tools.media and tools.write.

NotebookEdit {notebook_path, cell_id?, new_source, cell_type?, edit_mode?}: replace, insert or
delete one cell of a Jupyter notebook, with nbformat. The edited notebook is validated against
nbformat's schema before it is written (an edit that would leave it invalid is refused and
writes nothing), and written like Write and Edit write (atomic_write: all or nothing, the mtime
moved on), between the checkpoint hooks, so /rewind restores it like any other edit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import ToolContext, ToolError, ToolOutput
from .diffs import fits
from .media import cell_id, load_notebook
from .paths import after_change, before_change, check_fresh, read_bytes, record_read, resolve
from .write import atomic_write


def _find(nb: Any, cid: str, path: Path) -> int:
    for i, cell in enumerate(nb.cells):
        if cell_id(cell, i) == cid:
            return i
    known = ", ".join(cell_id(c, i) for i, c in enumerate(nb.cells[:20])) or "none: the notebook is empty"
    raise ToolError(f"Cell {cid!r} not found in {path}. Its cells: {known}.")


def _new_cell(nb: Any, kind: str, source: str) -> Any:
    from nbformat import v4

    cell = v4.new_code_cell(source) if kind == "code" else v4.new_markdown_cell(source)  # type: ignore[no-untyped-call]
    if (nb.get("nbformat"), nb.get("nbformat_minor", 0)) < (4, 5):
        del cell["id"]  # cell ids came with nbformat 4.5: an older notebook's schema forbids them
    return cell


def _retype(cell: Any, kind: str) -> None:
    """A cell changing between code and markdown gets the fields its new type has."""
    cell["cell_type"] = kind
    if kind == "code":
        cell.setdefault("outputs", [])
        cell.setdefault("execution_count", None)
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def notebook_edit(inp: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    import nbformat

    path = resolve(inp["notebook_path"], ctx)
    if path.suffix.lower() != ".ipynb":
        raise ToolError(f"{path} is not a Jupyter notebook (.ipynb); use Edit for other files.")
    if not path.is_file():
        raise ToolError(f"Notebook does not exist: {path}. Current working directory: {ctx.cwd}.")
    check_fresh(ctx, path)
    raw = read_bytes(path)
    nb, _problem = load_notebook(path, raw)
    mode = inp.get("edit_mode") or "replace"
    cid, kind, source = inp.get("cell_id"), inp.get("cell_type"), inp["new_source"]
    old_source: str | None = None
    if mode == "insert":
        if kind is None:
            raise ToolError("cell_type is required when inserting a cell (code or markdown).")
        at = _find(nb, cid, path) + 1 if cid else 0
        cell = _new_cell(nb, kind, source)
        nb.cells.insert(at, cell)
        cid = cell_id(cell, at)
        done = f"Inserted a {kind} cell {cell_id(cell, at)!r} at position {at}" + (f" (after {cid!r})" if cid else "")
    elif cid is None:
        raise ToolError(f"cell_id is required for edit_mode={mode}.")
    else:
        i = _find(nb, cid, path)
        cell = nb.cells[i]
        old_source = _text(cell.get("source"))
        if mode == "delete":
            del nb.cells[i]
            done = f"Deleted cell {cid!r}"
        else:
            cell["source"] = source
            if kind is not None and kind != cell.get("cell_type"):
                _retype(cell, kind)
            if cell.get("cell_type") == "code":
                cell["outputs"], cell["execution_count"] = [], None
            done = f"Updated cell {cid!r} ({cell.get('cell_type')})"
    try:
        nbformat.validate(nb)
    except Exception as e:  # nbformat.ValidationError, or a notebook that was already invalid
        why = getattr(e, "message", None) or str(e).split("\n", 1)[0]
        raise ToolError(f"The edit would leave {path} an invalid notebook, so nothing was written: {why}") from None
    data = (nbformat.writes(nb) + "\n").encode("utf-8")  # type: ignore[no-untyped-call]
    before_change(ctx, path)
    atomic_write(path, data)
    after_change(ctx, path)
    record_read(ctx, path)
    text = f"{done} in {path}. The notebook has {len(nb.cells)} cell{'s' if len(nb.cells) != 1 else ''}."
    return ToolOutput(text, details=_details(inp, nb, cid, kind or cell.get("cell_type") or "code", mode, old_source,
                                             raw.decode("utf-8", "replace"), data.decode("utf-8")))


def _text(source: Any) -> str:
    """A cell's source as text (nbformat keeps it as a string or a list of lines)."""
    return "".join(source) if isinstance(source, list) else str(source or "")


def _details(inp: dict[str, Any], nb: Any, cid: str | None, kind: str, mode: str, old_source: str | None,
             original: str, updated: str) -> dict[str, Any]:
    """NotebookEdit's structured output (Claude Code's NotebookEditOutput): the notebook before and
    after as files, when they are small enough to keep whole (tools.diffs.fits), else empty."""
    info = nb.get("metadata", {}).get("language_info", {})
    out: dict[str, Any] = {"new_source": inp["new_source"], "cell_type": kind,
                           "language": info.get("name") or "python", "edit_mode": mode, "cell_id": cid, "error": "",
                           "notebook_path": inp["notebook_path"]}
    if old_source is not None:
        out["old_source"] = old_source
    keep = fits(original, updated)
    out.update(original_file=original if keep else "", updated_file=updated if keep else "")
    return out
