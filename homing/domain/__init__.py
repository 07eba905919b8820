"""The domain's plain types that the layers hand each other: dataclasses, enums and
aliases, with no SQL and no I/O (kernel, docs/architecture.md "Layers").

One module per resource, named as the store's module whose SQL reads and writes them
(``homing.domain.accepting.NewJob`` is accepted by ``homing.store.accepting``), so the
API, the console and the managers name a job to accept, an outcome or a principal
without importing the store. The types every layer has used from the start (``Job``,
``Channel``, ``Tenant``…) stay in ``homing.models``.
"""
