"""Publish: what happens to the site after Hugo laid it out (the search index)."""
