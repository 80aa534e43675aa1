"""Room: built-in tools. Owns the tool package: tools.base is a base; the built-in tools sit on it.

Tools: the `Tool` base and the built-in coding tools with Claude Code's names.

Each built-in tool is split in two: its definition (name, description, input schema, flags:
all the first model request and the gate need) in tools.builtin, tools.grep or tools.web, and
its implementation (tools.read, tools.bash, tools.grep.search, tools.web.fetch, ...), which its
handler imports at the tool's first call (a function-level import: after the first call it is a
dict lookup). So building the tool set, `default_tools()`, imports no implementation module and
none of the stdlib they need (tests/tools/test_light_tools.py). A definition module imports
only tools.base and other definition modules at its top; an implementation never imports a
definition module (that would be a circle)."""
