"""The command line: argument parsing and rendering over the pipeline and the lifecycle."""
