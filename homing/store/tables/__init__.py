"""The tables, as SQLAlchemy Core metadata, in groups: ``core`` (tenants, keys, providers,
jobs, the queue, attempts, dead letters, usage, webhooks, settings, notices, alerts),
``inbound`` (events in, suppressions, sending domains), ``console`` (users, sessions,
flashes, invitations), ``audit``, ``recipients`` (recipients, categories, preferences)
and ``templates``, all on the one ``metadata`` of ``columns``.
Importing ``core`` loads every group, so ``core.metadata`` holds every table.
"""
