"""The lifecycle of submitted jobs: runs and their state machine, the detached job runner, listener configs."""
