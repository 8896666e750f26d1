"""`dra-operator untaint`: the inverse of `taint` (see `_taint.py`)."""

from dra_operator.cli._taint import untaint as command

__all__ = ["command"]
