"""Property tests: the reader never raises, and reads back what a generator wrote."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from the_loop.tasks import TaskList, TaskState, parse_tasks, with_state
from the_loop.tasks.mermaid import parse_flowchart

PATH = Path("tasks.md")
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

FRAGMENTS = [
    "---",
    "```",
    "~~~",
    "````mermaid",
    "```mermaid",
    "flowchart LR",
    "graph TD",
    "  T1 --> T2",
    "  A[7 x] -.-> B",
    "  T1 & T2 --> T3",
    "- [ ] 1. Title",
    "- [x] T2. Title",
    "- [X]",
    "- [-] **T3 — Bold.** rest — depends on T1, T2.",
    "- [~] 4) odd",
    "* [ ] 5: star",
    "  - _Depends on:_ 1, 2",
    "  - _Depends on:_ all",
    "  - _Depends on:_ 1–3",
    "  - _Depends on:_ the auth task",
    "  - _Requirements:_ R1, AC 2–4 (AC7)",
    '  - _Test:_ `pytest -k "x`',
    "  - _Test:_ `a` — _Requirements: R1_",
    "  - [ ] nested",
    "  continuation",
    "",
    "   ",
    "# Heading",
    "> quote",
    "\t- tab bullet",
    "- [ ]",
    "  - **Depends on:** T9",
    "*(AC1)*",
    "  ```",
    "- [ ] 99999999999999999999. huge",
    "- [ ] 3.2.1 dotted",
    "  - _Depends on:_ 1–99999999",
    "\ufeff- [ ] 1. bom",
]


@SETTINGS
@given(st.text())
def test_never_raises_on_arbitrary_text(text: str) -> None:
    check_invariants(text, parse_tasks(text, PATH))


@SETTINGS
@given(
    st.lists(
        st.one_of(
            st.sampled_from(FRAGMENTS),
            st.text(max_size=30),
            st.tuples(st.sampled_from(FRAGMENTS), st.text(max_size=12)).map("".join),
        ),
        max_size=40,
    ),
    st.sampled_from(["\n", "\r\n"]),
)
def test_never_raises_on_markdown_like_text(lines: list[str], newline: str) -> None:
    text = newline.join(lines)
    check_invariants(text, parse_tasks(text, PATH))


@SETTINGS
@given(st.lists(st.sampled_from(FRAGMENTS[4:12]) | st.text(max_size=20), max_size=20))
def test_mermaid_never_raises(lines: list[str]) -> None:
    parse_flowchart("\n".join(["flowchart LR", *lines]), PATH, 5)


def check_invariants(text: str, result: TaskList) -> None:
    data = text.encode("utf-8", "surrogatepass")
    line_count = text.count("\n") + 1
    for task in result.tasks:
        assert data[task.mark_offset - 1 : task.mark_offset] == b"["
        assert 1 <= task.line <= task.end_line <= line_count
        for state in TaskState:
            with_state(data, task, state)  # the offset is always writable
    # "none", or the sources that added edges joined by "+" (the order rule adds its own)
    known = {"fields", "mermaid", "both", "prose", "table", "order", "phases", "waves"}
    known |= {"checkpoints", "sub-tasks"}
    parts = result.dependency_source.split("+")
    assert result.dependency_source == "none" or set(parts) <= known, result.dependency_source
    for finding in result.findings:
        assert finding.where is not None and finding.where.path == PATH
        assert finding.code.startswith("tasks.")


# --- generated well-formed task lists -----------------------------------------------


@dataclass(frozen=True)
class Spec:
    number: int
    state: TaskState
    deps: tuple[int, ...]
    text: str


MARKS = {TaskState.OPEN: [" "], TaskState.DONE: ["x", "X"], TaskState.IN_PROGRESS: ["-"]}
TITLE = st.text(alphabet="abcdefghij klmnop,()`'", min_size=1, max_size=30).filter(
    lambda s: s.strip() != ""
)


@st.composite
def task_specs(draw: st.DrawFn) -> list[Spec]:
    count = draw(st.integers(min_value=1, max_value=12))
    numbers = sorted(draw(st.sets(st.integers(1, 400), min_size=count, max_size=count)))
    specs = []
    for index, number in enumerate(numbers):
        state = draw(st.sampled_from(list(TaskState)))
        earlier = numbers[:index]
        deps = tuple(sorted(draw(st.sets(st.sampled_from(earlier)) if earlier else st.just(set()))))
        specs.append(Spec(number, state, deps, draw(task_text(number, state, deps))))
    return specs


@st.composite
def task_text(draw: st.DrawFn, number: int, state: TaskState, deps: tuple[int, ...]) -> str:
    mark = draw(st.sampled_from(MARKS[state]))
    bullet = draw(st.sampled_from("-*+"))
    title = draw(TITLE).strip()
    style = draw(st.sampled_from(["plain", "T", "paren", "bold", "bold-after"]))
    head = {
        "plain": f"{number}. {title}",
        "T": f"T{number}. {title}",
        "paren": f"{number}) {title}",
        "bold": f"**T{number} — {title}.** Some prose.",
        "bold-after": f"{number}. **{title}.** Some prose.",
    }[style]
    lines = [f"{bullet} [{mark}] {head}"]
    if draw(st.booleans()):
        lines.append(f"  - {draw(TITLE).strip()}")
    value = draw(depends_value(deps))
    key = draw(
        st.sampled_from(["_Depends on:_", "**Depends on:**", "*Depends on:*", "_depends on:_"])
    )
    if style == "bold" and draw(st.booleans()):
        lines[0] += f" — depends on {value}."
    else:
        lines.append(f"  - {key} {value}")
    if draw(st.booleans()):
        lines.append(f"  - _Requirements:_ R{number}, AC {number}")
    if draw(st.booleans()):
        lines.append(f"  - _Test:_ `pytest -k t{number}`")
    if draw(st.booleans()):
        lines.append("")
    return "\n".join(lines)


@st.composite
def depends_value(draw: st.DrawFn, deps: tuple[int, ...]) -> str:
    if not deps:
        return draw(st.sampled_from(["none", "nothing", "None (it starts the chain)"]))
    prefix = draw(st.sampled_from(["", "T"]))
    items = [f"{prefix}{d}" for d in deps]
    if len(deps) > 1 and deps == tuple(range(deps[0], deps[-1] + 1)) and draw(st.booleans()):
        return f"{items[0]}{draw(st.sampled_from(['–', '-', '—']))}{items[-1]}"
    if len(items) > 1 and draw(st.booleans()):
        return ", ".join(items[:-1]) + " and " + items[-1]
    return ", ".join(items)


@SETTINGS
@given(task_specs(), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_reads_back_generated_ids_states_and_dependencies(
    specs: list[Spec], newline: str, front_matter: bool
) -> None:
    body = "\n".join(s.text for s in specs) + "\n"
    if front_matter:
        body = "---\ntype: tasks\nstatus: draft\n---\n\n# Tasks\n\n" + body
    text = body.replace("\n", newline)
    result = parse_tasks(text, PATH)
    assert [t.id for t in result.tasks] == [str(s.number) for s in specs]
    assert [t.state for t in result.tasks] == [s.state for s in specs]
    assert [t.depends_on for t in result.tasks] == [tuple(str(d) for d in s.deps) for s in specs]
    assert result.dependency_source == "fields"
    assert [f for f in result.findings if f.code != "tasks.depends-all"] == []

    # The writer: any state and back again is one byte away and then identical.
    data = text.encode()
    for task in result.tasks:
        for state in TaskState:
            changed = with_state(data, task, state)
            assert len(changed) == len(data)
            assert sum(a != b for a, b in zip(data, changed, strict=True)) <= 1
            mark = data[task.mark_offset : task.mark_offset + 1]
            restored = with_state(changed, task, task.state)
            if mark != b"X" or state is TaskState.DONE:
                assert restored == data
