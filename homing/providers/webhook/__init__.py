"""The webhook channel: the SSRF guard, the guarded transport and the sender."""
