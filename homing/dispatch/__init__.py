"""Delivery: the worker loop, one pass over the providers, the retry policy, alerts."""
