"""The DRA CEL environment: parse with cel-python's grammar, type-check, compile to Python."""
