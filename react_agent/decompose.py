"""Decomposition of a compound task for small models: split it into single-action parts and run them in turn.

A small local model (the embedded Gemma 3 270M) completes a task that needs one tool call far more often than
one that needs two. With a compound task ("Register user Viacheslav with email Viacheslav@test.com and find user
Ivan") split at its conjunctions, each part is a one-tool task::

    from react_agent import ReactAgent
    from react_agent.decompose import run_decomposed
    from react_agent.models import LocalChatModel

    agent = ReactAgent(LocalChatModel(), tools, prompts="en-compact", examples=examples)
    result = run_decomposed(agent, "Register user Viacheslav with email Viacheslav@test.com and find user Ivan")
    result.status, result.output   # one AgentResult for both parts

The split is rule-based (no model call; ``split_task``): a cut at ``and``/``then`` (``и``/``затем``/``потом``)
followed by an imperative verb, so "a base of 10 and height of 5" stays whole. Parts run in order; the first
part that does not finish ends the run. ``react-agent demo`` does the same for the local model.
"""

from __future__ import annotations

from react_agent._decompose import VERBS, arun_decomposed, combine_results, run_decomposed, run_subtasks, split_task

__all__ = ["VERBS", "arun_decomposed", "combine_results", "run_decomposed", "run_subtasks", "split_task"]
