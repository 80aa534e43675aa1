"""Room: plugins. Owns installed plugins and their marketplaces (`~/.loopwright/plugins/`, private:
0700 folders, 0600 files); may import plugins and below.

A marketplace is a directory or a git repository with `.claude-plugin/marketplace.json`
(`{"name", "owner"?, "plugins": [{"name", "source", "description"?, "version"?}]}`, Claude Code's
format); a plugin's `source` is a path inside it (`"./plugins/x"`) or a git repository
(`{"source": "git" | "url", "url": ...}`, `{"source": "github", "repo": "owner/name"}`). Git
sources are cloned with the real `git`. Installing copies the plugin into the store (a snapshot:
what was consented to is what runs) and enables it; `enabledPlugins` in settings
(`{"name@marketplace": true|false}`) turns installed plugins on or off per settings file.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from .manifest import Plugin, PluginError, load_plugin

INSTALLED = "installed_plugins.json"
MARKETPLACES = "known_marketplaces.json"


def store_dir() -> Path:
    """Where plugins live: $LOOPWRIGHT_HOME/plugins."""
    from ..home import loopwright_home

    return loopwright_home() / "plugins"


def _private_dir(p: Path) -> Path:
    from ..home import loopwright_home, private_dir

    return private_dir(p, loopwright_home())


def _read(name: str) -> dict[str, Any]:
    path = store_dir() / name
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise PluginError(f"{path}: {e} (fix or remove the file)") from None
    return data if isinstance(data, dict) else {}


def _write(name: str, data: dict[str, Any]) -> None:
    from ..home import loopwright_home, write_private

    write_private(store_dir() / name, json.dumps(data, indent=2), loopwright_home())


def _locked(name: str) -> Any:
    """The store file `name`'s lock, held around each read-modify-write of it (home.locked)."""
    from ..home import locked

    return locked(store_dir() / name)


def _git_clone(url: str, dest: Path) -> None:
    if shutil.which("git") is None:
        raise PluginError(f"cannot clone {url}: git is not installed")
    r = subprocess.run(["git", "clone", "--quiet", "--depth", "1", url, str(dest)], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    if r.returncode != 0:
        raise PluginError(f"git clone {url} failed: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}")


def _marketplace_json(root: Path) -> dict[str, Any]:
    path = root / ".claude-plugin" / "marketplace.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PluginError(f"{root} is not a plugin marketplace: it has no .claude-plugin/marketplace.json") from None
    except (OSError, ValueError) as e:
        raise PluginError(f"{path}: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not isinstance(data.get("plugins"), list):
        raise PluginError(f"{path}: needs \"name\" (a string) and \"plugins\" (a list)")
    return data


def add_marketplace(source: str) -> tuple[str, list[str]]:
    """Add a marketplace: a local directory (read in place) or a git URL or repository path
    (cloned). Returns its name and its plugins' names."""
    here = Path(source).expanduser()
    _read(MARKETPLACES)  # a damaged store is said before any clone
    if here.is_dir() and (here / ".claude-plugin" / "marketplace.json").is_file():
        root, kind = here.resolve(), "directory"
    else:
        tmp = Path(tempfile.mkdtemp(dir=_private_dir(store_dir() / "marketplaces")))
        try:
            _git_clone(str(here.resolve()) if here.exists() else source, tmp / "repo")
            name = _marketplace_json(tmp / "repo")["name"]
            root = store_dir() / "marketplaces" / _safe(name)
            if root.exists():
                shutil.rmtree(root)
            (tmp / "repo").rename(root)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        kind = "git"
    data = _marketplace_json(root)
    with _locked(MARKETPLACES):
        known = _read(MARKETPLACES)
        known[data["name"]] = {"source": source, "kind": kind, "path": str(root)}
        _write(MARKETPLACES, known)
    return data["name"], [str(p.get("name")) for p in data["plugins"] if isinstance(p, dict)]


def _safe(name: str) -> str:
    if not name or "/" in name or name in (".", "..") or "\0" in name:
        raise PluginError(f"marketplace name {name!r} cannot be a folder name")
    return name


def _find(spec: str) -> tuple[str, dict[str, Any], Path]:
    """(marketplace, the plugin's entry, the marketplace's root) for `plugin@marketplace` or a plugin name."""
    name, _, market = spec.partition("@")
    known = _read(MARKETPLACES)
    hits = []
    for m, info in known.items():
        if market and m != market:
            continue
        root = Path(info["path"])
        for entry in _marketplace_json(root)["plugins"]:
            if isinstance(entry, dict) and entry.get("name") == name:
                hits.append((m, entry, root))
    if not hits:
        there = ", ".join(known) or "none (add one: loopwright plugin marketplace add DIR_OR_GIT_URL)"
        raise PluginError(f"no plugin {spec!r} in the marketplaces ({there})")
    if len(hits) > 1:
        raise PluginError(f"plugin {name!r} is in several marketplaces ({', '.join(h[0] for h in hits)}): "
                          f"name one, e.g. {name}@{hits[0][0]}")
    return hits[0]


def install(spec: str) -> tuple[Plugin, list[str]]:
    """Install `plugin@marketplace`: copy (or clone) it into the store, enabled. Returns the plugin
    and what it may run (the caller shows it: installing is the consent)."""
    market, entry, root = _find(spec)
    name = str(entry["name"])
    dest = _private_dir(store_dir() / "cache" / _safe(market)) / _safe(name)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent))
    try:
        src = entry.get("source", f"./{name}")
        if isinstance(src, str):
            origin = (root / src).resolve()
            if not origin.is_relative_to(root.resolve()):
                raise PluginError(f"plugin {name!r}: its source {src!r} is outside the marketplace")
            shutil.copytree(origin, tmp / "p", symlinks=True)
        elif isinstance(src, dict) and src.get("source") in ("git", "url") and isinstance(src.get("url"), str):
            _git_clone(src["url"], tmp / "p")
        elif isinstance(src, dict) and src.get("source") == "github" and isinstance(src.get("repo"), str):
            _git_clone(f"https://github.com/{src['repo']}.git", tmp / "p")
        else:
            raise PluginError(f"plugin {name!r}: source {src!r} is not a path, git or github source")
        plugin = load_plugin(tmp / "p", f"{name}@{market}")
        if dest.exists():
            shutil.rmtree(dest)
        (tmp / "p").rename(dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    plugin = load_plugin(dest, f"{name}@{market}")
    with _locked(INSTALLED):
        installed = _read(INSTALLED)
        installed[f"{name}@{market}"] = {"path": str(dest), "enabled": True, "version": entry.get("version")}
        _write(INSTALLED, installed)
    return plugin, plugin.runs()


def _entry(spec: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    installed = _read(INSTALLED)
    keys = [k for k in installed if k == spec or k.partition("@")[0] == spec]
    if len(keys) != 1:
        raise PluginError(f"no installed plugin {spec!r}" if not keys else
                          f"{spec!r} is installed from several marketplaces: name one ({', '.join(keys)})")
    return keys[0], installed[keys[0]], installed


def set_enabled(spec: str, enabled: bool) -> str:
    """Enable or disable an installed plugin; returns its `name@marketplace`."""
    with _locked(INSTALLED):
        key, entry, installed = _entry(spec)
        entry["enabled"] = enabled
        _write(INSTALLED, installed)
    return key


def remove(spec: str) -> str:
    """Uninstall a plugin (its copy is deleted); returns its `name@marketplace`."""
    with _locked(INSTALLED):
        key, entry, installed = _entry(spec)
        path = Path(entry["path"])
        if path.is_relative_to(store_dir()):
            shutil.rmtree(path, ignore_errors=True)
        del installed[key]
        _write(INSTALLED, installed)
    return key


def listing() -> list[dict[str, Any]]:
    """Installed plugins: {"id", "path", "enabled", "version"}."""
    return [{"id": k, **v} for k, v in sorted(_read(INSTALLED).items())]


def marketplaces() -> dict[str, Any]:
    """Known marketplaces: name -> {"source", "kind", "path"}."""
    return _read(MARKETPLACES)


def enabled_plugins(overrides: dict[str, Any], warnings: list[str]) -> list[Plugin]:
    """The installed plugins that are on: the store's state, with `enabledPlugins` of the settings
    over it. A name the settings turn on that is not installed is one warning line."""
    if not (store_dir() / INSTALLED).is_file() and not overrides:
        return []
    try:
        installed = _read(INSTALLED)
    except PluginError as e:
        warnings.append(str(e))
        return []
    out: list[Plugin] = []
    for key, on in overrides.items():
        if on is True and key not in installed:
            warnings.append(f"enabledPlugins names {key}, which is not installed (loopwright plugin install {key})")
    for key, entry in installed.items():
        if not overrides.get(key, entry.get("enabled", True)):
            continue
        try:
            out.append(load_plugin(entry["path"], key))
        except (PluginError, KeyError) as e:
            warnings.append(f"installed plugin {key}: {e}")
    return out


__all__ = ["add_marketplace", "enabled_plugins", "install", "listing", "marketplaces", "remove", "set_enabled",
           "store_dir"]
