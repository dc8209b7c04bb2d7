"""The run machinery around the columns: which cells a run has and in what order, the
trace its compiled cells share, the cell cache and its fingerprints, shards, waivers,
``--isolate`` and interrupts, coverage and how a target is loaded."""
