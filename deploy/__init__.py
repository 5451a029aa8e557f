"""Deployment files (Dockerfile, compose.yaml, nginx.conf, systemd unit) and local_cluster, their loopback harness."""
