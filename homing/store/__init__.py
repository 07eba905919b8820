"""Every SQL statement lives here; SQLite and PostgreSQL behind one interface."""
