"""The line scanner: one ASCII line per card on a serial line (docs/protocols/line-scanner.md)."""
