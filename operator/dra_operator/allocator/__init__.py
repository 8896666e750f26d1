"""The structured-parameters allocator: pure, synchronous, no I/O."""
