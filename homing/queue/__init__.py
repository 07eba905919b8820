"""Scheduling: wake-ups for idle workers (claims and leases live in the store)."""
