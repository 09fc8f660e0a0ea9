"""Inside the harness: ``loop hook`` answers Claude Code's and Codex's hook events, and
``loop install`` wires them into a project.

The hooks re-inject the resume brief when a session starts (after a clear or a
compaction too), complete the reset records the harness's own events prove,
warn and then stop work when the window fills, take the interim checkpoint
before a compaction, and refuse to stop while a task's work is unsaved. A hook
never breaks the harness: any failure is one stderr line, a log line under
the state folder, and exit 0.
"""
