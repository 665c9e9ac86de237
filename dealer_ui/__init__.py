"""The studio server: the only place that wires concrete drivers and stores to the core."""
