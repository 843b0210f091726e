"""Sign-in through the school's OpenID Connect provider: its discovery and keys (provider.py), the ID
token's checks (tokens.py), the flow and the account it opens (flow.py), and the two routes (router.py)."""
