"""Runnable examples that build on the public API (``python -m react_agent.examples.<name>``)."""
