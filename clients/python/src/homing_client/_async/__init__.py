"""``AsyncClient`` and its resources, one module per group of calls."""
