"""What a run tells its operators besides the report: logs on stderr and Prometheus metrics."""
