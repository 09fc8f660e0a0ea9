"""loop: a spec-workflow engine for AI coding agents.

Work items move through requirements, design, tasks, implementation and review;
their tasks form a DAG; and no context reset happens without a checkpoint.
"""

__version__ = "0.1.0"
