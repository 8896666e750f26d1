"""NodeResourcesFit and NodeResourcesBalancedAllocation (kube-scheduler's `noderesources`)."""
