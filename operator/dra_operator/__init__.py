"""dra-operator: the whole Kubernetes Dynamic Resource Allocation control plane, in Python."""

__version__ = "0.1.0"
