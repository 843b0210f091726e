"""Accounts: password hashing and checks, one-time secrets, invitation codes (pure functions, no I/O)."""
