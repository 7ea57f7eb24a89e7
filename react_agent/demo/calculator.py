"""The calculator: :func:`evaluate_expression` and the ``calculator`` tool.

The expression is parsed with :mod:`ast` and the tree is walked here: numbers, ``+ - * / // % **``, unary
signs, parentheses, a few :mod:`math` functions and the constants ``pi`` and ``e``. Nothing is ever passed
to ``eval``/``exec``; the input length, the exponents and the size of integer results are bounded.
"""

from __future__ import annotations

import ast
import logging
import math
import operator
from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field

from react_agent.demo._common import DemoToolError, Lang, check_lang, make_tool

__all__ = [
    "MAX_EXPONENT",
    "MAX_EXPRESSION_LENGTH",
    "MAX_INT_BITS",
    "CalculatorError",
    "evaluate_expression",
    "format_number",
    "make_calculator_tool",
]

logger = logging.getLogger(__name__)

MAX_EXPRESSION_LENGTH = 500
"""Longest expression (in characters) the calculator accepts."""
MAX_EXPONENT = 1000
"""Largest absolute value of an exponent in ``**``."""
MAX_INT_BITS = 10_000
"""Largest integer (in bits, about 3000 decimal digits) the calculator computes or returns."""


class CalculatorError(DemoToolError):
    """An expression the calculator refuses or cannot compute."""


Number = int | float

_ROUND_DIGITS_LIMIT = 100


def _check_number(value: object) -> Number:
    """Accept a finite real result of a bounded size, refuse everything else."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise CalculatorError("calc_too_big", limit=MAX_INT_BITS)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CalculatorError("calc_not_finite")
        return value
    raise CalculatorError("calc_not_real")


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise CalculatorError("calc_exponent", exponent=format_number(exponent), limit=MAX_EXPONENT)
    # An int result has at least (bits(base) - 1) * exponent + 1 bits: refuse before computing it.
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and (abs(base).bit_length() - 1) * exponent >= MAX_INT_BITS
    ):
        raise CalculatorError("calc_too_big", limit=MAX_INT_BITS)
    return _check_number(base**exponent)


def _round(value: Number, ndigits: Number | None = None) -> Number:
    if ndigits is None:
        return round(value)
    if not isinstance(ndigits, int) or abs(ndigits) > _ROUND_DIGITS_LIMIT:
        raise CalculatorError("calc_round_digits", limit=_ROUND_DIGITS_LIMIT)
    return round(value, ndigits)


_BINARY_OPS: dict[type[ast.operator], Callable[[Number, Number], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _power,
}
_UNARY_OPS: dict[type[ast.unaryop], Callable[[Number], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sqrt": math.sqrt,
    "abs": abs,
    "round": _round,
    "min": min,
    "max": max,
    "log": math.log,
    "sin": math.sin,
    "cos": math.cos,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}


class _Evaluator:
    """Walks an expression tree, computing only the whitelisted node types."""

    def __init__(self, source: str) -> None:
        self.source = source

    def refuse(self, node: ast.AST) -> CalculatorError:
        fragment = ast.get_source_segment(self.source, node) or type(node).__name__
        if len(fragment) > 60:
            fragment = fragment[:57] + "..."
        return CalculatorError("calc_not_allowed", fragment=fragment)

    def visit(self, node: ast.AST) -> Number:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                return _check_number(node.value)
            raise self.refuse(node)
        if isinstance(node, ast.BinOp):
            binary = _BINARY_OPS.get(type(node.op))
            if binary is None:
                raise self.refuse(node)
            left = self.visit(node.left)
            right = self.visit(node.right)
            return _check_number(binary(left, right))
        if isinstance(node, ast.UnaryOp):
            unary = _UNARY_OPS.get(type(node.op))
            if unary is None:
                raise self.refuse(node)
            return _check_number(unary(self.visit(node.operand)))
        if isinstance(node, ast.Name):
            if node.id in _CONSTANTS:
                return _CONSTANTS[node.id]
            if node.id in _FUNCTIONS:
                raise CalculatorError("calc_not_called", name=node.id)
            raise CalculatorError("calc_unknown_name", name=node.id[:60])
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.refuse(node)

    def call(self, node: ast.Call) -> Number:
        if not isinstance(node.func, ast.Name):
            raise self.refuse(node.func)
        name = node.func.id
        function = _FUNCTIONS.get(name)
        if function is None:
            raise CalculatorError("calc_unknown_name", name=name[:60])
        if node.keywords:
            raise self.refuse(node.keywords[0])
        args: list[Number] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.refuse(arg)
            args.append(self.visit(arg))
        try:
            result = function(*args)
        except TypeError as exc:
            raise CalculatorError("calc_args", name=name, detail=str(exc)) from exc
        return _check_number(result)


def evaluate_expression(expression: str) -> Number:
    """Compute an arithmetic expression without ``eval``: parse it with :mod:`ast`, walk the tree.

    Allowed: ``int``/``float`` literals, ``+ - * / // % **``, unary ``+``/``-``, parentheses, the
    functions ``sqrt abs round min max log sin cos`` (positional arguments only) and the constants
    ``pi`` and ``e``. Everything else (names, attributes, other calls, subscripts, strings, lambdas,
    comprehensions, comparisons...) raises :class:`CalculatorError`, as do expressions longer than
    :data:`MAX_EXPRESSION_LENGTH`, exponents above :data:`MAX_EXPONENT` in absolute value, integers
    above :data:`MAX_INT_BITS` bits, non-finite or complex results, division by zero and math
    domain errors.
    """
    text = expression.strip()
    if not text:
        raise CalculatorError("calc_empty")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise CalculatorError("calc_too_long", length=len(text), limit=MAX_EXPRESSION_LENGTH)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise CalculatorError("calc_syntax", detail=exc.msg) from None
    except (ValueError, RecursionError, MemoryError):  # null bytes, absurd nesting
        raise CalculatorError("calc_too_complex") from None
    try:
        return _Evaluator(text).visit(tree.body)
    except CalculatorError:
        raise
    except ZeroDivisionError:
        raise CalculatorError("calc_zero_division") from None
    except OverflowError:  # float overflow, int too large to convert to float
        raise CalculatorError("calc_overflow") from None
    except RecursionError:
        raise CalculatorError("calc_too_complex") from None
    except ValueError as exc:  # math domain error: sqrt(-1), log(0)
        raise CalculatorError("calc_math", detail=str(exc)) from None


def format_number(value: Number) -> str:
    """Render a calculator result: integers exactly, floats with 15 significant digits."""
    if isinstance(value, int):
        return str(value)
    return format(value, ".15g")


class _CalculatorArgs(BaseModel):  # the description comes from strings/<lang>.json
    expression: str = Field(examples=["2 + 2 * 3", "sqrt(16) / (1.5 + 0.5) ** 2"])


def make_calculator_tool(*, lang: Lang = "ru") -> BaseTool:
    """The ``calculator`` tool: arg ``expression``; returns the number as text (see
    :func:`evaluate_expression` for what is allowed and :func:`format_number` for the rendering)."""
    lang = check_lang(lang)

    def calculator(expression: str) -> str:
        try:
            value = evaluate_expression(expression)
        except DemoToolError as exc:
            logger.debug("calculator refused %r: %s", expression[:100], exc.code)
            raise exc.localized(lang) from None
        return format_number(value)

    return make_tool("calculator", lang, calculator, _CalculatorArgs)
