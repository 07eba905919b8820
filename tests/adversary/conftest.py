"""Adversary tests: each tries one abuse a hostile tenant, test key, anonymous caller,
provider or receiver could attempt, black-box where the abuse is about processes.
docs/security.md names the test that proves each defence."""
