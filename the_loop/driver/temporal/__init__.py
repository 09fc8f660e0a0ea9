"""Task attempts as durable Temporal workflows (``--backend temporal``, ``loop worker``).

``temporalio`` is an optional extra (``pip install 'loop-engine[temporal]'``): nothing
outside this package imports it, and this package is imported only by the commands
that name the Temporal backend.
"""
