"""The checkpoint invariant: plans, the journaled transaction, recovery, lock, resets, policy."""
