"""The mutations: each breaks one feature that matters, and names the tests that must notice.

A function mutation replaces the body of ``function`` (a qualified name) in
``path`` with ``body``; ``__original__`` in the body calls the untouched
function (see ``splice.py``). A text mutation replaces the one occurrence of
``old`` in ``path`` with ``new`` (templates). ``selection`` is what pytest runs:
a few files or test ids, so one mutation takes seconds. When the code moves,
update ``path``/``function`` here; ``run.py`` reports such a mutation STALE.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    """One feature-breaking change and the tests that must catch it."""

    name: str
    feature: str  # the feature it breaks, in one line
    path: str  # repository-relative
    selection: tuple[str, ...]
    function: str | None = None  # qualname whose body is replaced
    body: str | None = None
    old: str | None = None  # exact snippet, for text mutations
    new: str | None = None

    def __post_init__(self) -> None:
        by_function = self.function is not None and self.body is not None
        by_text = self.old is not None and self.new is not None
        if by_function == by_text:
            raise ValueError(f"{self.name}: give function+body or old+new, not both or neither")


CHECKPOINT = "the_loop/checkpoint/transaction.py"
POLICY = "the_loop/checkpoint/policy.py"
ANALYSIS = "the_loop/dag/analysis.py"
TRANSITIONS = "the_loop/workflow/task_transitions.py"
TASK_CLI = "tests/cli/test_task_cli.py"
CHECKPOINT_GIT = "tests/checkpoint/test_checkpoint_git.py"
CRASH = "tests/checkpoint/test_checkpoint_crash.py::test_crash_then_status_doctor_and_repair"
WALK = "tests/acceptance/test_acceptance_walk.py::test_walk_from_new_to_all_tasks_done"
JSON_DONE = f"{TASK_CLI}::test_json_output_of_task_done"

MUTATIONS: tuple[Mutation, ...] = (
    # ---- first, the runner's own sanity: a mutation only a child process can notice
    Mutation(
        "subprocess-sanity",
        "sanity: `python -m the_loop` children load the mutated copy (crash hook inert)",
        CHECKPOINT,
        (CRASH,),
        function="_fault",
        body="return None",
    ),
    # ---- the task graph
    Mutation(
        "cycle-detector-blind",
        "the DAG's cycle detector finds no cycle",
        "the_loop/dag/cycles.py",
        ("tests/dag/test_dag.py",),
        function="cyclic_groups",
        body="return [-1] * len(ordered)",
    ),
    Mutation(
        "blocked-task-ready",
        "a task with an open dependency is reported as ready",
        ANALYSIS,
        ("tests/dag/test_dag.py",),
        function="_rank_ready",
        body="return [i for i in range(graph.size) if not graph.done[i]]",
    ),
    Mutation(
        "unknown-dependency-unreported",
        "a dependency on a task that does not exist is not reported",
        ANALYSIS,
        ("tests/dag/test_dag.py",),
        function="_edge_findings",
        body=(
            'return [f for f in __original__(graph, unread) if f.code != "dag.unknown-dependency"]'
        ),
    ),
    Mutation(
        "duplicate-id-unreported",
        "two tasks with one id are not reported",
        ANALYSIS,
        ("tests/dag/test_dag.py",),
        function="_first_definitions",
        body="""
            first = {}
            for task in task_list.tasks:
                first.setdefault(task.id, task)
            return first
        """,
    ),
    Mutation(
        "tick-never-written",
        "the line-local writer never ticks a task in tasks.md",
        "the_loop/tasks/writer.py",
        ("tests/tasks/test_tasks_writer.py",),
        function="set_state",
        body="return False",
    ),
    # ---- requirements and approvals
    Mutation(
        "undefined-citation-unreported",
        "a task citing a requirement id that is not defined is not reported",
        "the_loop/spec/traceability.py",
        ("tests/spec/test_requirements_trace.py",),
        function="trace",
        body='return [f for f in __original__(reqs, tasks) if f.code != "trace.undefined"]',
    ),
    Mutation(
        "approval-hash-blind",
        "the approval hash ignores content, so an edited artifact is never stale",
        "the_loop/spec/approval.py",
        (f"{TASK_CLI}::test_done_refuses_a_task_list_edited_since_approval", WALK),
        function="body_hash",
        body='return _PREFIX + "0" * 16',
    ),
    # ---- config
    Mutation(
        "config-validation-accepts-all",
        "config validation accepts every config, however wrong",
        "the_loop/config/validation.py",
        ("tests/config/test_config_loader.py",),
        function="validate",
        body="return []",
    ),
    Mutation(
        "any-key-overridable",
        "a work item may override any config key, not only the overridable ones",
        "the_loop/config/schema.py",
        ("tests/config/test_config_loader.py",),
        function="is_overridable",
        body="return True",
    ),
    # ---- the context policy
    Mutation(
        "context-policy-none",
        "the context policy always answers reset `none`",
        POLICY,
        ("tests/checkpoint/test_policy.py",),
        function="boundary_reset",
        body="return Decision(Reset.NONE, what)",
    ),
    Mutation(
        "mid-task-clears",
        "mid-task pressure produces `clear` instead of `compact`",
        POLICY,
        ("tests/checkpoint/test_policy.py",),
        function="_mid_task",
        body="""
            if verdict is None or verdict is Verdict.NO_OP or policy.mid_task == "off":
                return Decision(Reset.NONE, f"{what}; no reset")
            return Decision(Reset.CLEAR, f"{what}; pressure verdict {verdict.value}")
        """,
    ),
    Mutation(
        "token-arm-ignored",
        "the token arm of the pressure verdict never fires",
        POLICY,
        ("tests/checkpoint/test_policy.py",),
        function="_token_arm",
        body="return Verdict.NO_OP",
    ),
    Mutation(
        "percent-arm-ignored",
        "the percent-of-window arm of the pressure verdict never fires",
        POLICY,
        ("tests/checkpoint/test_policy.py",),
        function="_percent_arm",
        body="return Verdict.NO_OP",
    ),
    # ---- the checkpoint
    Mutation(
        "checkpoint-tick-skipped",
        "the checkpoint does not tick the completed task",
        CHECKPOINT,
        (JSON_DONE,),
        function="_step_tick",
        body='_fault("tick")',
    ),
    Mutation(
        "log-append-skipped",
        "the execution-log append writes nothing",
        "the_loop/log/execution_log.py",
        ("tests/log/test_execlog_append.py",),
        function="apply_append",
        body="return None",
    ),
    Mutation(
        "context-line-dropped",
        "log entries lose their `Context:` line",
        "templates/log-entry.md.j2",
        (WALK,),
        old="- **Context:** {{ context | indent(2) }}\n",
        new="",
    ),
    Mutation(
        "phase-mirror-unsynced",
        "the checkpoint does not sync the phase mirror in the log",
        CHECKPOINT,
        (WALK,),
        function="_step_phase",
        body='_fault("phase")',
    ),
    Mutation(
        "sync-phase-noop",
        "the log's phase mirror is never rewritten",
        "the_loop/log/execution_log.py",
        ("tests/log/test_execlog_phase.py::test_sync_phase_changes_only_the_phase_value",),
        function="sync_phase",
        body="return False",
    ),
    Mutation(
        "checkpoint-commit-skipped",
        "the checkpoint's commit step is skipped",
        CHECKPOINT,
        (f"{CHECKPOINT_GIT}::test_commit_message_subject_summary_and_trailers", JSON_DONE),
        function="_step_commit",
        body='return "skipped", []',
    ),
    Mutation(
        "trailers-omitted",
        "checkpoint commits carry no Loop-* trailers",
        "templates/commit-message.txt.j2",
        (f"{CHECKPOINT_GIT}::test_commit_message_subject_summary_and_trailers",),
        old="{% if trailers %}",
        new="{% if false %}",
    ),
    Mutation(
        "reset-record-not-prepared",
        "no reset record is prepared after a checkpoint",
        CHECKPOINT,
        (JSON_DONE, f"{TASK_CLI}::test_task_boundary_directive"),
        function="_step_reset",
        body="return None",
    ),
    Mutation(
        "rollback-keeps-files",
        "a failed commit's rollback leaves the tick and the log entry in place",
        CHECKPOINT,
        (f"{CHECKPOINT_GIT}::test_failing_pre_commit_hook_shows_its_output_and_undoes_everything",),
        function="_rollback",
        body="_clear(root, journal)",
    ),
    Mutation(
        "vague-next-accepted",
        'a vague `--next` ("continue") is accepted',
        "the_loop/workflow/entry_text.py",
        (f"{TASK_CLI}::test_done_refuses_a_vague_next_with_exit_2",),
        function="concrete_next",
        body='return " ".join(text.split())',
    ),
    Mutation(
        "project-lock-not-locking",
        "the project lock lets concurrent commands in together",
        "the_loop/checkpoint/lock.py",
        (
            "tests/checkpoint/test_concurrency.py::test_two_task_done_on_the_same_task_exactly_one_lands",
        ),
        function="project_lock",
        body="yield",
    ),
    Mutation(
        "journal-not-saved",
        "the checkpoint journal is never written",
        CHECKPOINT,
        (CRASH,),
        function="_save",
        body="return None",
    ),
    Mutation(
        "recovery-skipped",
        "an interrupted checkpoint is never finished or rolled back",
        CHECKPOINT,
        (CRASH,),
        function="_recover",
        body="return None",
    ),
    Mutation(
        "compact-confirm-any-session",
        "a reset is confirmed from any session (compact and clear alike)",
        "the_loop/checkpoint/resets.py",
        ("tests/checkpoint/test_resets.py",),
        function="_confirm",
        body="""
            record = _pick(root, item, checkpoint, session)
            return _close(root, record, "completed", confirmed_session=session)
        """,
    ),
    # ---- git
    Mutation(
        "index-not-restored",
        "the index is not put back after git refuses a checkpoint commit",
        "the_loop/git/index.py",
        ("tests/git/test_commit.py",),
        function="IndexSnapshot.restore",
        body="return None",
    ),
    Mutation(
        "merge-not-refused",
        "a checkpoint commit is made in the middle of a merge",
        "the_loop/git/operations.py",
        ("tests/git/test_commit.py",),
        function="refuse_during",
        body="return None",
    ),
    Mutation(
        "identity-unchecked",
        "git identity is not checked before a checkpoint stages anything",
        "the_loop/git/identity.py",
        ("tests/git/test_commit.py",),
        function="identity",
        body='return ("", "")',
    ),
    Mutation(
        "packed-refs-ignored",
        "HEAD and the branch are read from loose ref files only, as if packed-refs did not exist",
        "the_loop/git/head.py",
        ("tests/git/test_differential.py",),
        function="read_head",
        body="""
            text = (dirs.git_dir / "HEAD").read_text(encoding="utf-8").strip()
            if not text.startswith("ref:"):
                return Head(None, text)
            ref = text.removeprefix("ref:").strip()
            loose = dirs.common_dir / ref
            sha = loose.read_text(encoding="utf-8").strip() if loose.is_file() else None
            return Head(ref.removeprefix("refs/heads/"), sha)
        """,
    ),
    Mutation(
        "identity-from-config-only",
        "identity is read from config files alone: GIT_AUTHOR_* and GIT_COMMITTER_* are ignored",
        "the_loop/git/identity.py",
        ("tests/git/test_differential.py",),
        function="_resolve",
        body="""
            name = values.get(f"{role}.name") or values.get("user.name")
            email = values.get(f"{role}.email") or values.get("user.email")
            return (name, email) if name and email is not None else None
        """,
    ),
    Mutation(
        "junk-committed",
        "editor swap files and build output are swept into checkpoint commits",
        "the_loop/git/commit.py",
        ("tests/git/test_commit_junk.py",),
        function="_is_junk",
        body="return False",
    ),
    # ---- the one process runner
    Mutation(
        "group-not-stopped",
        "a child past its deadline is killed alone: its own children (a hook's, a test's) run on",
        "the_loop/io/processes.py",
        ("tests/io/test_processes.py",),
        function="stop_group",
        body="""
            child.kill()
            child.wait()
        """,
    ),
    # ---- task transitions
    Mutation(
        "failing-test-accepted",
        "`task done --verify` accepts a task whose test fails",
        "the_loop/workflow/task_tests.py",
        (f"{TASK_CLI}::test_verify_with_a_failing_test_changes_nothing",),
        function="Verification.passed",
        body="return True",
    ),
    Mutation(
        "open-dependency-ignored",
        "`task done`/`start` accept a task whose dependency is open",
        TRANSITIONS,
        (
            f"{TASK_CLI}::test_start_refuses_while_a_dependency_is_open_and_names_it",
            f"{TASK_CLI}::test_done_refuses_a_task_whose_dependency_is_open",
        ),
        function="_require_deps_done",
        body="return None",
    ),
    Mutation(
        "unlocked-tasks-executable",
        "tasks run against a task list that is not approved",
        TRANSITIONS,
        (f"{TASK_CLI}::test_done_refuses_a_task_list_that_is_not_approved",),
        function="_require_executable",
        body="return None",
    ),
    # ---- more of the same features, from other angles
    Mutation(
        "next-not-lowest-id",
        "`next` and the ready list are not in the documented deterministic order",
        ANALYSIS,
        ("tests/dag/test_dag.py",),
        function="_rank_ready",
        body="return __original__(graph, schedule)[::-1]",
    ),
    Mutation(
        "laxer-arm-wins",
        "the laxer arm of the pressure verdict wins instead of the stricter",
        POLICY,
        ("tests/checkpoint/test_policy.py",),
        function="pressure_verdict",
        body="""
            from dataclasses import replace

            reading = __original__(pressure, tokens=tokens, window=window, percent=percent)
            arms = [a for a in (reading.token_arm, reading.percent_arm) if a is not None]
            return replace(reading, verdict=min(arms, key=lambda v: v.rank) if arms else None)
        """,
    ),
    Mutation(
        "missing-tokens-read-as-zero",
        "a missing token count is read as zero instead of reported as a gap",
        POLICY,
        ("tests/checkpoint/test_policy.py",),
        function="pressure_verdict",
        body="""
            if tokens is None and window is None:
                tokens = 0
            return __original__(pressure, tokens=tokens, window=window, percent=percent)
        """,
    ),
    Mutation(
        "ticking-makes-tasks-stale",
        "the approval hash counts checkboxes, so ticking a task makes tasks.md stale",
        "the_loop/spec/approval.py",
        (
            "tests/cli/test_lifecycle_cli.py::test_ticking_never_makes_tasks_stale_but_editing_a_task_does",
        ),
        function="body_hash",
        body="""
            front = parse_front_matter(text, path)
            body = text[front.body_offset :] if front.present and not front.findings else text
            return _PREFIX + hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]
        """,
    ),
    Mutation(
        "upstream-ignored",
        "an approval ignores its upstream artifacts (design stays locked on stale requirements)",
        "the_loop/spec/approval.py",
        ("tests/cli/test_lifecycle_cli.py::test_approve_refuses_while_upstream_is_stale",),
        function="upstream_kinds",
        body="return []",
    ),
    Mutation(
        "overrides-ignored",
        "a work item's front-matter overrides are not applied",
        "the_loop/config/loader.py",
        ("tests/config/test_config_loader.py",),
        function="with_overrides",
        body="return base",
    ),
    Mutation(
        "phase-mismatch-unreported",
        "a log phase that disagrees with the artifacts is not reported",
        "the_loop/spec/phase.py",
        ("tests/spec/test_phase_findings.py",),
        function="phase_findings",
        body="return []",
    ),
    Mutation(
        "reset-never-dispatched",
        "a reset shown to the agent stays `prepared` instead of `dispatched`",
        "the_loop/checkpoint/resets.py",
        (JSON_DONE,),
        function="mark_dispatched_locked",  # the core marks under its own lock
        body="return record",
    ),
    Mutation(
        "doctor-blind",
        "`loop doctor` finds nothing: no interrupted checkpoint, no open reset",
        "the_loop/checkpoint/doctor.py",
        (f"{TASK_CLI}::test_doctor_lists_an_open_reset_and_is_healthy_once_it_is_resolved",),
        function="diagnose",
        body="return DoctorReport()",
    ),
    Mutation(
        "resume-anchor-lost",
        "the resume brief cannot find the log's last entry and its Next:",
        "the_loop/log/execution_log.py",
        (f"{TASK_CLI}::test_resume_names_the_last_next_and_the_ready_tasks",),
        function="last_entry",
        body="return None",
    ),
    # ---- the read-only reports, through the click commands
    Mutation(
        "graph-stderr-dropped",
        "`loop graph` draws a broken graph and exits 1 but never says what is broken (stderr)",
        "the_loop/cli/cmd_items.py",
        ("tests/cli/test_truthful_cli.py::test_graph_names_its_errors_and_exits_1",),
        function="_echo_graph_errors",
        body="if errors:\n    raise click.exceptions.Exit(1)",
    ),
    # ---- the one cache (io/content_cache.py)
    Mutation(
        "stale-parse-cache-served",
        "the cache serves an entry whose content hash no longer matches (an edit goes unseen)",
        "the_loop/io/content_cache.py",
        (
            "tests/cli/test_reports_follow_the_files.py::"
            "test_a_changed_file_is_never_answered_from_before[hand tick]",
        ),
        function="ContentCache.load_bytes",
        body="""
            entry = self._entry(purpose, path)
            if entry is None:
                return None
            raw = read_regular_file(entry, MAX_ENTRY_BYTES)
            if raw is None or not raw.startswith(_MAGIC):
                return None
            head_end = raw.find(b"\\n", len(_MAGIC))
            try:
                header = json.loads(raw[len(_MAGIC) : head_end])
                stamp, kept_purpose, kept_path, digest, key = header
                if (stamp, kept_purpose, kept_path) != (code_stamp(), purpose, str(path)):
                    return None
            except (ValueError, TypeError, OSError):
                return None
            return raw[head_end + 1 :] if head_end > 0 else None
        """,
    ),
    Mutation(
        "no-cache-switch-ignored",
        "`LOOP_NO_CACHE=1` is ignored: cache files are still written (project and home)",
        "the_loop/io/content_cache.py",
        ("tests/io/test_no_cache.py",),
        function="caches_allowed",
        body="return True",
    ),
    # ---- today's capabilities: the order rule, the ledger, the merge queue
    Mutation(
        "unread-checkbox-holds-nothing",
        "where order is the dependency, tasks below an open checkbox loop cannot read are offered",
        "the_loop/tasks/order.py",
        (
            "tests/tasks/test_order.py::"
            "test_an_open_checkbox_that_is_no_task_holds_back_what_the_order_puts_after_it",
        ),
        function="_Order.after_unread",
        body="return None",
    ),
    Mutation(
        "cc-sdd-parallel-marker-ignored",
        "cc-sdd's trailing ` (P)` is not read: its siblings run one at a time",
        "the_loop/tasks/assembly.py",
        (
            "tests/tasks/test_order.py::"
            "test_cc_sdd_s_trailing_p_marker_lets_siblings_run_side_by_side",
        ),
        old='    if title[-3:] == "(P)" and title[-4:-3] in " \\t":\n',
        new="    if False:\n",
    ),
    Mutation(
        "listed-task-ignores-unlisted-above",
        "a task Kiro's waves list starts before an unlisted task the file puts above it",
        "the_loop/tasks/order.py",
        (
            "tests/tasks/test_order.py::"
            "test_a_listed_task_waits_for_the_unlisted_task_the_file_puts_above_it",
            "tests/oracle/test_order_oracle_items.py",
        ),
        old="                self.add(i, list(unlisted))\n",
        new="                pass\n",
    ),
    Mutation(
        "checkpoint-sub-task-gates-its-parent-only",
        "a checkpoint sub-task does not hold back the tasks below its parent",
        "the_loop/tasks/order.py",
        (
            "tests/tasks/test_order.py::"
            "test_a_checkpoint_sub_task_holds_back_the_task_a_wave_puts_beside_its_parent",
            "tests/oracle/test_order_oracle_items.py",
        ),
        old=(
            "        for i in sorted(self.first.values()):"
            "  # every task, sub-tasks too, in file order\n"
        ),
        new="        for i in self.top:\n",
    ),
    Mutation(
        "parent-offered-before-children",
        "a parent task is ready before its open required sub-tasks (Kiro/Spec Kit order rule)",
        "the_loop/tasks/order.py",
        (
            "tests/tasks/test_order.py::test_ready_sets_walk_the_plan_in_order",
            "tests/tasks/test_order.py::"
            "test_kiro_order_is_the_dependency_and_a_parent_waits_for_its_required_children",
        ),
        function="_Order.families",
        body="""
            tasks = self.tasks
            for i in sorted(self.parent):
                p = self.parent[i]
                ancestors = self._ancestors(i)
                inherited = [d for d in self._deps(p) if d in self.first and d not in ancestors]
                inherited = [d for d in inherited if not self._within(self.first[d], p)]
                self.add(i, inherited)
                if p in self.held:
                    self.held.setdefault(i, self.held[p])
                elif (unread := tasks[p].unread_depends_line) is not None:
                    self.held.setdefault(i, unread)
            for p in sorted(self.children, reverse=True):
                self._derive_state(p)
        """,
    ),
    Mutation(
        "unpriced-model-charged-zero",
        "the ledger charges $0 for a model with no price instead of leaving the dollars unknown",
        "the_loop/ledger/prices.py",
        ("tests/ledger/test_report.py::test_a_model_without_a_price_has_no_dollars_not_zero",),
        function="dollars",
        body="""
            total = 0.0
            for model, tokens in usage.items():
                price = prices.get(model)
                if price is not None:
                    total += price.dollars(tokens)
            return total
        """,
    ),
    Mutation(
        "merge-queue-skips-test-after-rebase",
        "the parallel merge queue lands a rebased branch without running the task's test on it",
        "the_loop/driver/lanes/merge_queue.py",
        (
            "tests/parallel/test_lanes.py::"
            "test_a_branch_whose_test_fails_after_a_clean_rebase_is_evicted_not_landed",
        ),
        old="verification = run_test_in(attempt.test, path) if attempt.test else None",
        new="verification = None",
    ),
    Mutation(
        "tick-trusts-a-stale-offset",
        "the tick uses the offset the command read even after the file changed under it",
        "the_loop/tasks/writer.py",
        (
            "tests/tasks/test_tasks_writer.py::"
            "test_a_tick_as_read_of_a_file_changed_since_reads_it_again",
        ),
        old="if as_read is not None and hashlib.sha256(data).hexdigest() == as_read[1]:",
        new="if as_read is not None:",
    ),
    Mutation(
        "log-questions-read-every-commit",
        "a log's history questions read every commit of the repository, not the log's own",
        "the_loop/git/history.py",
        ("tests/git/test_history.py::test_a_logs_questions_read_only_the_commits_that_changed_it",),
        old='"HEAD", "--", spec],',
        new='"HEAD"],',
    ),
    Mutation(
        "lane-folds-onto-the-new-head",
        "a lane's branch left at an older base is folded onto the new head, undoing what landed",
        "the_loop/git/worktrees.py",
        (
            "tests/parallel/test_worktrees.py::"
            "test_a_reused_branch_from_an_older_base_folds_onto_its_own_fork",
        ),
        old='base = _run(repo, "merge-base", "HEAD", base, what=',
        new='base = base or _run(repo, "merge-base", "HEAD", base, what=',
    ),
    Mutation(
        "story-tasks-owe-every-fr",
        "tasks that trace by user story are still held to every FR id (false uncovered warnings)",
        "the_loop/spec/traceability.py",
        (
            "tests/spec/test_item_formats.py::"
            "test_tasks_that_trace_by_story_owe_each_story_a_task_not_each_fr",
        ),
        old="by_story = bool(covered) and all(_family_of(req_id) == STORY for req_id in covered)",
        new="by_story = False",
    ),
    Mutation(
        "carried-compaction-confirmed-late",
        "a compaction a command agent's turn carries is confirmed only after the turn",
        "the_loop/driver/sessions.py",
        (
            "tests/driver/test_driver_command.py::"
            "test_an_agent_that_checkpoints_itself_gets_loops_compaction_done",
        ),
        old="if start is Start.COMPACT and pending is not None and session:",
        new="if False:",
    ),
)
