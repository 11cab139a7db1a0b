"""The code that runs inside a Flink version's virtualenv: the standard library only (it starts the
compile server's JVM and gets out of its way)."""
