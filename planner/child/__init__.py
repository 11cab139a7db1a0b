"""The code that runs inside a Flink version's virtualenv. Standard library and py4j only."""
