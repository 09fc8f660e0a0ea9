"""``execute-tasks --agent … --parallel N``: tasks side by side, one worktree each.

The coordinator (``coordinator``) keeps the DAG, the ready set (``scheduler``),
the leases (``checkpoint.leases``), the merge queue (``merge_queue``) and every
checkpoint; an executor runs task attempts (``attempt`` is the seam, ``local``
runs them in threads on this machine, ``lane`` is one attempt in its
worktree). ``run_state`` writes what the run is doing for ``status`` and the
live board.
"""
