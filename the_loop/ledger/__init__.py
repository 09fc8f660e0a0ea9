"""The ledger: what every agent run cost, attributed to item, task and attempt.

Each run the driver starts (a task's run, a retry, a compaction pass) and each
turn a hook sees in a session started by hand is one :class:`RunRecord`, with
its tokens read from the harness's own records (``harness_usage``), appended to
``.the-loop/state/ledger/runs.jsonl``. Prices come from ``agent.prices``;
without one a model's runs show tokens only. ``report`` sums the records per
task and per item (compaction apart), ``forecast`` projects what is left.
"""

from the_loop.ledger.records import RunRecord
from the_loop.ledger.tokens import Tokens, Usage

__all__ = ["RunRecord", "Tokens", "Usage"]
