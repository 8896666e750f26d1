"""Test support shared by several test packages: pytest fixtures and clients for test tools."""
