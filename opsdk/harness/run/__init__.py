"""The run machinery around the columns: which cells a run has and in what order, the
cell cache and its fingerprints, shards, waivers, ``--isolate`` and interrupts, coverage
and how a target is loaded (the trace a run's compiled cells share and the run's scope
are in :mod:`opsdk.harness.core`, below the columns that read them)."""
