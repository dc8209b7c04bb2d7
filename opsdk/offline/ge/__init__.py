"""The GE side offline: ``_torchair`` stand-in (``standin``) and the GE reference executor."""
