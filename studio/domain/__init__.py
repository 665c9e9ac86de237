"""The studio's domain: the game's rules and pay tables, the procedure, its commands and events, the log's records
and their hash chain, roads, chat filtering. Pure functions and immutable values, standard library only: no I/O, no
clock, no randomness that is not injected (checked by import-linter on this whole package).
"""
