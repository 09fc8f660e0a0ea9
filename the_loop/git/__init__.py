"""The one git layer: checkpoint commits, status, the index snapshot, operations in progress."""
