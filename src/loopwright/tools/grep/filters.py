"""Room: built-in tools (on tools.base). Owns Grep's `glob` and `type` filters for the pure-Python
engine, matched by the one ignore matcher (ignore.py); may import data types and tools.base.

`glob` filters (gitignore-style, `!` to exclude) and `type` filters take precedence over
ignore rules and hiding, exactly as in ripgrep: `glob: "*.py"` also finds `.hidden.py`.
Only the common file types are known (TYPES); others are an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ...ignore import IgnoreRules, segment_regex
from ..base import ToolError

# ripgrep 13's definitions of the common types (`rg --type-list`).
TYPES: dict[str, list[str]] = {
    "asm": ["*.S", "*.asm", "*.s"], "c": ["*.[chH]", "*.[chH].in", "*.cats"],
    "clojure": ["*.clj", "*.cljc", "*.cljs", "*.cljx"], "cmake": ["*.cmake", "CMakeLists.txt"],
    "config": ["*.cfg", "*.conf", "*.config", "*.ini"],
    "cpp": ["*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc",
            "*.cc.in", "*.hh", "*.hh.in", "*.inl"],
    "cs": ["*.cs"], "csharp": ["*.cs"], "css": ["*.css", "*.scss"], "csv": ["*.csv"], "dart": ["*.dart"],
    "docker": ["*Dockerfile*"], "elixir": ["*.eex", "*.ex", "*.exs"], "erlang": ["*.erl", "*.hrl"],
    "go": ["*.go"], "h": ["*.h", "*.hpp"], "haskell": ["*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"],
    "html": ["*.ejs", "*.htm", "*.html"], "java": ["*.java", "*.jsp", "*.jspx", "*.properties"],
    "jinja": ["*.j2", "*.jinja", "*.jinja2"], "js": ["*.js", "*.jsx", "*.vue"],
    "json": ["*.json", "composer.lock"], "jsonl": ["*.jsonl"], "julia": ["*.jl"], "kotlin": ["*.kt", "*.kts"],
    "less": ["*.less"], "lock": ["*.lock", "package-lock.json"], "log": ["*.log"], "lua": ["*.lua"],
    "make": ["*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in",
             "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"],
    "markdown": ["*.markdown", "*.md", "*.mdown", "*.mkdn"], "md": ["*.markdown", "*.md", "*.mdown", "*.mkdn"],
    "nix": ["*.nix"], "ocaml": ["*.ml", "*.mli", "*.mll", "*.mly"],
    "perl": ["*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"],
    "php": ["*.php", "*.php3", "*.php4", "*.php5", "*.phtml"], "protobuf": ["*.proto"], "py": ["*.py"],
    "r": ["*.R", "*.Rmd", "*.Rnw", "*.r"], "readme": ["*README", "README*"], "rst": ["*.rst"],
    "ruby": ["*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"], "rust": ["*.rs"],
    "sass": ["*.sass", "*.scss"], "scala": ["*.sbt", "*.scala"],
    "sh": ["*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh",
           ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login",
           ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc",
           "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout",
           "zprofile", "zshenv", "zshrc"],
    "sql": ["*.psql", "*.sql"], "svg": ["*.svg"], "swift": ["*.swift"],
    "tex": ["*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"], "tf": ["*.tf"],
    "toml": ["*.toml", "Cargo.lock"], "ts": ["*.ts", "*.tsx"], "txt": ["*.txt"],
    "xml": ["*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"],
    "yaml": ["*.yaml", "*.yml"], "zig": ["*.zig"],
}



def override_matcher(globs: list[str]) -> Callable[[str, bool], bool | None] | None:
    """rg's --glob overrides: gitignore-style globs on the path relative to the search root,
    with the meaning flipped (a plain glob whitelists, `!glob` ignores).
    Returns match(rel, is_dir) -> True (whitelisted), False (ignored) or None (no opinion)."""
    if not globs:
        return None
    gi = IgnoreRules(globs)
    has_white = any(not neg for _, neg in gi.rules)

    def match(rel: str, is_dir: bool) -> bool | None:
        res = gi.check(rel, is_dir)
        if res is not None:
            return res  # "ignored" by a plain glob = whitelisted by the override
        if has_white and not is_dir:
            return False
        return None

    return match


def type_matcher(name: str | None) -> Callable[[str], bool] | None:
    if not name:
        return None
    globs = TYPES.get(name)
    if globs is None:
        raise ToolError(f"rg error: unrecognized file type: {name}. Known types: {', '.join(sorted(TYPES))}.")
    rx = re.compile("^(?:" + "|".join(segment_regex(g).pattern for g in globs) + ")$", re.DOTALL)
    return lambda base: rx.match(base) is not None

