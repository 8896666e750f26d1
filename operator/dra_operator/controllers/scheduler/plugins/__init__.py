"""kube-scheduler's plugins, one module each, named as upstream's plugin folders."""
