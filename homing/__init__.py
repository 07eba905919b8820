"""Homing: self-hostable, multi-tenant notification delivery."""

__version__ = "0.1.0"
