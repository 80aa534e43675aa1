"""Room: bases (the gate). Owns shell-command analysis for the gate (parsing, the command tables, what a command reads, writes and runs); its modules may import workspace and ignore only.

`bashparse` splits a command into the simple commands it runs, `bashtables` holds each
command's options, `bashcheck` reads a command against them (files read and written,
directories, programs run). The gate's Bash verdicts (`gate.bash`) build on them.
"""
