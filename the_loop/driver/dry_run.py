"""``loop execute-tasks ID --agent … --dry-run``: what a run would do first; nothing changes."""

from __future__ import annotations

from dataclasses import dataclass

from the_loop.driver import state
from the_loop.driver.agent_choice import choose_kind, make_agent
from the_loop.driver.agents import Start
from the_loop.driver.run import DriveOptions, agent_environment
from the_loop.spec.project import ItemContext
from the_loop.workflow.briefs import brief
from the_loop.workflow.execute_tasks import execute_step
from the_loop.workflow.item_report import fresh_report
from the_loop.workflow.next_action import next_action

_NEW_SESSION = "<new-session-id>"


@dataclass(frozen=True)
class DryRunPlan:
    """The first steps of a run, as they would happen now."""

    item: str
    agent: str
    crossing: dict[str, object] | None  # the phase boundary to cross first, if any
    task: str | None
    title: str | None
    start: str  # new | resume
    session: str | None  # the session a rerun would resume
    command: str
    brief: str | None
    policy: dict[str, object]
    max_attempts: int
    timeout_seconds: int

    def to_json(self) -> dict[str, object]:
        """The plan with camelCase keys."""
        return {
            "item": self.item,
            "agent": self.agent,
            "crossing": self.crossing,
            "task": self.task,
            "title": self.title,
            "start": self.start,
            "session": self.session,
            "command": self.command,
            "brief": self.brief,
            "policy": self.policy,
            "maxAttempts": self.max_attempts,
            "timeoutSeconds": self.timeout_seconds,
        }


def plan_run(ctx: ItemContext, options: DriveOptions) -> DryRunPlan:
    """What ``drive`` would do first: the crossing, the task, the agent command line."""
    settings = ctx.config.agent
    kind = choose_kind(settings, options.agent)
    agent = make_agent(settings, kind, agent_environment(options.env))
    step = execute_step(ctx, dry_run=True)
    report = fresh_report(ctx)
    action = next_action(report)
    task = action.task if action.kind == "implement" else None
    text = step.brief or (brief(report, action) if task is not None else None)
    saved = state.load(ctx.project.root, ctx.item.id)
    session = saved.session if saved is not None and saved.kind == kind.value else None
    start = Start.RESUME if session else Start.NEW
    invocation = agent.turn(start, session or _NEW_SESSION, text or "")
    command = invocation.shown() + (" < the brief on stdin" if invocation.stdin else "")
    title = report.dag.task(task).title if task is not None and report.dag is not None else None
    policy = ctx.config.context
    return DryRunPlan(
        item=ctx.item.id,
        agent=kind.value,
        crossing=step.crossing.to_json() if step.crossing is not None else None,
        task=task,
        title=title,
        start=start.value,
        session=session,
        command=command,
        brief=text,
        policy={
            "enabled": policy.enabled,
            "phaseBoundary": policy.phase_boundary,
            "taskBoundary": policy.task_boundary,
            "midTask": policy.mid_task,
        },
        max_attempts=settings.max_attempts,
        timeout_seconds=settings.timeout_seconds,
    )
