"""Request and response bodies, one module per resource; ``shared`` holds what they share.

Families: ``…Create`` and ``…Patch`` a client sends (``Strict``), ``…Public`` answers,
lists as ``Page``s.
"""
