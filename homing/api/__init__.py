"""HTTP in → store. Never calls a provider directly."""
