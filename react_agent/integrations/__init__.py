"""An agent's outside: the Runnable entry points and drivers, ``as_tool``, the LangGraph node, ``Conversation``."""

from react_agent.integrations._conversation import Conversation
from react_agent.integrations._runnable import (
    AgentNode,
    AgentTool,
    ConfigurableAgent,
    RunnableAgent,
    output_json_schema,
    structured_answer,
)
from react_agent.integrations._surface import AgentRunnable

__all__ = ["AgentNode", "AgentRunnable", "AgentTool", "ConfigurableAgent", "Conversation", "RunnableAgent",
           "output_json_schema", "structured_answer"]
