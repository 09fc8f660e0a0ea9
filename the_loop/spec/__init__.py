"""Work items and their artifacts: ids, front matter, locks, phases, requirements, traceability."""
