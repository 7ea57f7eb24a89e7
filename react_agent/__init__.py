"""react_agent: text-protocol LLM agents on langchain-core.

The model answers with a JSON object (``thought``, ``action``, ``action_input``) that react_agent
parses and executes, so any chat model works (GigaChat, any LangChain model, small local models).
"""

from react_agent._prompts import PromptSet
from react_agent._types import FINISH, AgentAction, AgentResult, AgentStep, Example, Usage
from react_agent.core import AgentConfig, BaseAgent
from react_agent.errors import (
    ConfigError,
    JournalError,
    JournalMismatchError,
    ModelCallError,
    OutputParseError,
    ReactAgentError,
    RunError,
)
from react_agent.integrations import AgentNode, AgentTool, ConfigurableAgent, Conversation
from react_agent.parsing import parse_actions, parse_response
from react_agent.plan import Plan, PlanAndExecuteAgent, PlanConfig, PlanResult, PlanState, PlanStep
from react_agent.react import ReactAgent
from react_agent.reflection import ReflectionAgent, ReflectionConfig, ReflectionState
from react_agent.runtime import RetryPolicy, RunState, is_transient, read_journal
from react_agent.tools import answer_schema, examples_for_tools

__all__ = [
    "FINISH",
    "AgentAction",
    "AgentConfig",
    "AgentNode",
    "AgentResult",
    "AgentStep",
    "AgentTool",
    "BaseAgent",
    "ConfigError",
    "ConfigurableAgent",
    "Conversation",
    "Example",
    "JournalError",
    "JournalMismatchError",
    "ModelCallError",
    "OutputParseError",
    "Plan",
    "PlanAndExecuteAgent",
    "PlanConfig",
    "PlanResult",
    "PlanState",
    "PlanStep",
    "PromptSet",
    "ReactAgent",
    "ReactAgentError",
    "ReflectionAgent",
    "ReflectionConfig",
    "ReflectionState",
    "RetryPolicy",
    "RunError",
    "RunState",
    "Usage",
    "answer_schema",
    "examples_for_tools",
    "is_transient",
    "parse_actions",
    "parse_response",
    "read_journal",
]

__version__ = "0.2.0"
