"""Provider adapters: one vendor per file, each with its failure classification table."""
