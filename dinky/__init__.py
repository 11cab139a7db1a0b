"""``planlineage watch --dinky-db``: Apache Dinky's database (read only) -> the lifecycle."""
