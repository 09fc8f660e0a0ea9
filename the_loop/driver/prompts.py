"""The words the driver gives an agent besides the task brief.

A new task gets its brief from ``templates/briefs/task.md.j2`` (the same text
``loop execute-tasks`` prints in guide mode). A task resumed after an
unfinished or failed run gets ``continue task N`` with the log's last Next:
and what went wrong; a compaction gets a focus built from that Next:.
"""

from __future__ import annotations

from the_loop.tasks import Task
from the_loop.workflow.task_tests import Verification

_OUTPUT_LINES = 20


# What ends a continue prompt: the serial driver's agent may checkpoint the task itself.
SERIAL_CLOSING = (
    "When the test passes, loop checkpoints the task; or record it yourself with `loop task done`."
)


def continue_prompt(
    task_id: str,
    title: str,
    *,
    next_step: str | None = None,
    verification: Verification | None = None,
    error: str | None = None,
    closing: str = SERIAL_CLOSING,
) -> str:
    """``continue task N``, the log's Next:, why the task is not done yet, then ``closing``."""
    lines = [f"continue task {task_id}: {title}", ""]
    if next_step:
        lines += [f"Last log entry's Next: {next_step}", ""]
    if error:
        lines += [f"The previous run ended with an error: {error}", ""]
    if verification is not None and not verification.passed:
        lines.append(f"The task's test does not pass yet: {verification.summary()}")
        output = verification.output.strip().splitlines()[-_OUTPUT_LINES:]
        if output:
            lines += ["", "```", *output, "```"]
        lines.append("")
    lines.append(closing)
    return "\n".join(lines) + "\n"


def interrupted_preface(task: Task) -> str:
    """Put before the brief of a task an earlier run left in progress."""
    return (
        f"An earlier run stopped during task {task.id}; its work so far is in the tree. "
        "Continue it rather than starting over.\n\n"
    )


def compaction_focus(next_step: str | None) -> str:
    """What a compaction should keep: the next step, the constraints; not finished work."""
    keep = f"Keep what the next step needs: {next_step}. " if next_step else ""
    return keep + "Keep the design constraints and conventions; drop finished work."
