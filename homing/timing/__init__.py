"""When work may run: pacing (each provider account's rate rules, and each vendor's
preset) and the wake-ups of idle workers. The queue itself (claims, leases) is in
``homing.store``.
"""
