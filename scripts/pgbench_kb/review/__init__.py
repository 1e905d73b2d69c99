"""Review: what a change does to the knowledge (``kb diff``), for pull requests."""
