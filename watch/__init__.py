"""What every platform watcher of ``planlineage watch`` shares: the poll loop, the ledger, run
adoption, states to events and the check.  A platform (StreamPark, Dinky, the SQL Gateway's
JobManager) is an adapter that yields typed records into this core; adapters never import each
other."""
