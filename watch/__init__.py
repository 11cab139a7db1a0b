"""What every platform watcher of ``planlineage watch`` shares: the poll loop, the ledger, run
adoption, states to events and the check.  A platform (StreamPark, Dinky, the SQL Gateway's
JobManager) is an adapter that yields typed records into this core; adapters never import each
other."""

# Defaults shared by the watchers and the CLI (here, so that building the parser imports nothing).
DEFAULT_INTERVAL = 5.0  # seconds between polls; StreamPark's own watcher refreshes every 5 s
DEFAULT_LOST_GRACE = 300.0  # a lost job is often a network blip or a console restart
DEFAULT_TIMEOUT = 120.0  # --once: longest wait for the poll's compiles and deliveries
