"""A tool that asks for approval and a model that calls it for the invoice its task names: the runs of the
approval tests (unit and served)."""

from __future__ import annotations

import json
import re

from langchain_core.messages import BaseMessage
from langchain_core.tools import StructuredTool


def guarded_pay(paid: list[str]) -> StructuredTool:
    """``pay(invoice)``, marked ``requires_approval``; each paid invoice is appended to ``paid``."""

    def pay(invoice: str) -> str:
        """Pay an invoice."""
        paid.append(invoice)
        return f"paid {invoice}"

    return StructuredTool.from_function(pay, metadata={"requires_approval": True})


def pay_the_task_invoice(messages: list[BaseMessage]) -> str:
    """One model for many runs (``FunctionChatModel``): pay the invoice the task names (``pay A-1``), then finish."""
    text = "\n".join(str(m.content) for m in messages)
    if "paid " in text:
        return json.dumps({"thought": "", "action": "FINISH", "action_input": "done"})
    invoice = re.findall(r"pay ([A-Z]-\d)", text)[-1]
    return json.dumps({"thought": "", "action": "pay", "action_input": {"invoice": invoice}})
