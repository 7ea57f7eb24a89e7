"""The agent: ``BaseAgent`` and its loop, options, the step prompt's variables, executing a decision."""

from react_agent.core._agent import BaseAgent
from react_agent.core._config import AgentConfig, Seconds
from react_agent.core._render import truncate

__all__ = ["AgentConfig", "BaseAgent", "Seconds", "truncate"]
