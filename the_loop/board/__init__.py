"""``loop board``: a read-only page on 127.0.0.1 showing items, the live DAG and the ledger.

``state_reader`` says what is running (the :class:`~the_loop.board.state_reader.RunStateReader`
interface: the serial driver's files today, the parallel runner's state file when it lands);
``snapshot`` gathers everything the page shows into one JSON object; ``server`` serves the
page, that JSON and the SVG from a thread with the standard library's ``http.server``.
"""
