"""The smart shoe: a framed binary protocol on a serial line (docs/protocols/smart-shoe.md)."""
