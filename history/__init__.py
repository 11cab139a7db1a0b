"""History replay: the runs a platform recorded before planlineage watched it, sent once with their
original times (``planlineage watch ... --history``). The platforms' readers turn their rows into
:class:`~planlineage.history.records.PastRun` records; the replay compiles and delivers them."""
