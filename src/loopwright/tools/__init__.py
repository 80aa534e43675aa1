"""Room: built-in tools. Owns the tool package: tools.base is a base; the built-in tools sit on it.

Tools: the `Tool` base and the built-in coding tools with Claude Code's names."""
