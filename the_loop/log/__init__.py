"""The execution log: the append-only resume anchor of every work item."""
