"""``planlineage gateway``: a transparent proxy in front of the Flink SQL Gateway's REST API that
records each session's statements, compiles the session's script when a statement submits a job,
and follows that job's state at the JobManager (an adapter of :mod:`planlineage.watch`)."""
