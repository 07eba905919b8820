"""The managers: domain rules between the API (and CLI) and the store."""
