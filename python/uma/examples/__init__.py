"""Examples: ``python -m uma.examples.train`` trains an MLP on the digits data."""
