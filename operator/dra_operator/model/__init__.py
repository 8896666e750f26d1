"""Version-neutral, immutable view of DRA objects, shaped like resource.k8s.io/v1."""
