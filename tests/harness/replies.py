"""What a fake model server answers, and when: usage, replies, recorded requests, rules.

A fake answers every model call with a *reply* chosen by *rules*:

1. the test's rules, in the order they were added; the first rule whose ``when`` matches and
   that still has uses left decides (``times=1`` makes a one-shot rule, so a run of one-shot
   rules is a queue);
2. then the built-in answers: a compaction request gets ``summary_reply``, a request that
   carries a tool result gets ``after_tool_reply``, anything else ``default_reply``.

A compaction request (the harness asking for a summary of the conversation) is recognised
before anything else, and test rules skip it unless built with ``compaction=True``: Claude Code
sends its summary prompt in the same user message as a pending tool result, and a queue of
scripted replies must not be eaten by a compaction the test did not plan for.

Every model call is recorded with the reply it got, as an :class:`Exchange`; requests search
their whole JSON body with :meth:`ModelRequest.contains`, because hook context arrives in places
other than the user's prompt (Claude Code sends it as ``role: "system"`` messages).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

# --- usage -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnthropicUsage:
    """Token counts the Anthropic fake reports; the three input fields are disjoint there."""

    input: int = 1200
    cache_creation: int = 300
    cache_read: int = 5000
    output: int = 42

    def as_api(self) -> dict[str, Any]:
        """The ``usage`` object of a ``message_start`` event (output filled in later)."""
        return {
            "input_tokens": self.input,
            "cache_creation_input_tokens": self.cache_creation,
            "cache_read_input_tokens": self.cache_read,
            "output_tokens": self.output,
            "service_tier": "standard",
        }


@dataclass(frozen=True)
class OpenAIUsage:
    """Token counts the OpenAI fake reports; ``cached`` is a part of ``input`` (OpenAI's rule)."""

    input: int = 1500
    cached: int = 1000
    output: int = 30
    reasoning: int = 0

    def as_api(self) -> dict[str, Any]:
        """The ``usage`` object of a Responses API ``response.completed`` event."""
        return {
            "input_tokens": self.input,
            "input_tokens_details": {"cached_tokens": self.cached},
            "output_tokens": self.output,
            "output_tokens_details": {"reasoning_tokens": self.reasoning},
            "total_tokens": self.input + self.output,
        }


Usage = AnthropicUsage | OpenAIUsage

# --- replies -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A plain assistant text reply; the turn ends."""

    text: str
    usage: Usage | None = None


@dataclass(frozen=True)
class ToolCall:
    """A shell tool call running ``command``: Claude's ``Bash``, Codex's ``exec_command``.

    ``preface`` is an optional text block sent before the call, as real models often do.
    """

    command: str
    preface: str = ""
    usage: Usage | None = None


@dataclass(frozen=True)
class SubagentCall:
    """Claude Code's subagent tool call (``Agent``, formerly ``Task``) with ``prompt``.

    The tool's name is taken from the request's tool list, so the reply fits the CLI.
    """

    prompt: str
    description: str = "Continue the work item"
    subagent_type: str = "general-purpose"
    usage: Usage | None = None


@dataclass(frozen=True)
class Summary:
    """The answer to a compaction request.

    The Anthropic fake wraps it as ``<analysis>…</analysis>\\n<summary>…</summary>`` (Claude
    Code keeps only the summary part); the OpenAI fake sends the text as it is.
    """

    summary: str = "The user asked for small shell tasks; all of them are finished."
    usage: Usage | None = None


@dataclass(frozen=True)
class HttpError:
    """An HTTP error status with the API's error body."""

    status: int = 500
    message: str = "fake server error"


@dataclass(frozen=True)
class PromptTooLong:
    """The API's "context window exceeded" 400; Claude Code answers it by compacting."""


Reply = Text | ToolCall | SubagentCall | Summary | HttpError | PromptTooLong

# --- requests ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelRequest:
    """One model call as the fake received it, with the facts rules look at.

    ``prompt`` is the user's newest prompt text; it is empty when the request only carries a
    tool result back (``is_tool_result``). ``is_compaction`` marks a summary request.
    """

    index: int
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    raw: str
    prompt: str
    is_tool_result: bool
    is_compaction: bool

    def strings(self) -> Iterator[str]:
        """Every string value anywhere in the JSON body, decoded (no JSON escapes)."""
        yield from _strings(self.body)

    def contains(self, needle: str) -> bool:
        """Whether ``needle`` occurs in any string of the body (system, messages, tools…)."""
        return any(needle in text for text in self.strings())


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


@dataclass(frozen=True)
class Exchange:
    """A recorded model call and what the fake answered."""

    request: ModelRequest
    reply: Reply
    usage: Usage | None


# --- rules -------------------------------------------------------------------------------

Predicate = Callable[[ModelRequest], bool]
ReplySource = Reply | Callable[[ModelRequest], Reply]


@dataclass(frozen=True)
class Rule:
    """When ``when(request)`` holds, answer with ``reply`` (a reply or a function making one).

    ``times`` limits how often the rule fires (None: no limit). ``compaction=True`` lets the
    rule answer compaction requests too, which rules otherwise never see.
    """

    when: Predicate
    reply: ReplySource
    times: int | None = None
    compaction: bool = False


def always(request: ModelRequest) -> bool:
    """Matches every request."""
    return True


def is_tool_result(request: ModelRequest) -> bool:
    """Matches a request that brings a tool's result back."""
    return request.is_tool_result


def is_compaction(request: ModelRequest) -> bool:
    """Matches a compaction (summary) request; use it with ``Rule(..., compaction=True)``."""
    return request.is_compaction


def prompt_contains(needle: str) -> Predicate:
    """Matches a request whose newest user prompt contains ``needle``."""
    return lambda request: needle in request.prompt


def body_contains(needle: str) -> Predicate:
    """Matches a request with ``needle`` anywhere in its body (hook context, system prompt…)."""
    return lambda request: request.contains(needle)


def command_after(marker: str, prompt: str) -> str | None:
    """The rest of the first prompt line holding ``marker``, stripped; None if no line has it."""
    for line in prompt.splitlines():
        where = line.find(marker)
        if where >= 0:
            command = line[where + len(marker) :].strip()
            return command or None
    return None


def run_command(marker: str = "RUN:", preface: str = "Running the command.") -> Rule:
    """A rule turning ``<marker> <command>`` in the user's prompt into a shell tool call.

    With the server's ``after_tool_reply`` (say ``Text("done")``) this scripts "the task says
    ``RUN: <cmd>``; run it as a tool call, then answer done".
    """

    def matches(request: ModelRequest) -> bool:
        return not request.is_tool_result and command_after(marker, request.prompt) is not None

    def reply(request: ModelRequest) -> Reply:
        command = command_after(marker, request.prompt)
        assert command is not None  # matches() checked it
        return ToolCall(command, preface=preface)

    return Rule(when=matches, reply=reply)


def prompt_too_long_once(when: Predicate) -> Rule:
    """A rule answering the first matching request with "prompt is too long" (once)."""
    return Rule(when=when, reply=PromptTooLong(), times=1)
