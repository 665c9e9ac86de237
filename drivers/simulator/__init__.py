"""The device simulator: a shoe or card scanner on a kernel pseudo-terminal, with fault injection."""
