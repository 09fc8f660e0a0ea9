"""Reasoning about a task graph: validity, cycles, readiness, order, and rendering it."""
