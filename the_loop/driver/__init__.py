"""The headless driver: ``loop execute-tasks ID --agent claude|codex|command``.

It runs the task DAG with an agent it starts itself, one task brief per task,
and performs the resets the checkpoints call for: a fresh agent process after a
clear, the session compacted and resumed after a compact (``sessions``). It
verifies each task's test, checkpoints, reports progress as events, stops
cleanly on Ctrl-C, and a rerun resumes where it stopped (``run``).

Modules: ``agents`` (what a run looks like), ``claude``/``codex``/``command``
(the three kinds), ``agent_choice``, ``process`` (one agent process),
``transcripts`` (its records), ``sessions`` (resets performed), ``checkpoints``,
``prompts``, ``events``, ``state``, ``interrupts``, ``run`` (the loop), ``dry_run``.
"""
