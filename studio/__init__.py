"""The studio's domain core (cards, rules, pay tables, settlement, odds, procedure) and its services.

Core modules are pure: they take values and return values, with no I/O, no clock and no unseeded randomness.
"""
