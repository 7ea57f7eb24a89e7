"""Text -> decision: the bounded parser of the model's replies, lenient JSON, and block extraction."""

from react_agent.parsing._extract import extract_json, outside_fences
from react_agent.parsing._jsonish import strings_in
from react_agent.parsing._multi import parse_actions
from react_agent.parsing._parser import (
    FINISH_NAMES,
    MAX_NAME,
    MAX_NESTING,
    NONE_NAMES,
    canonical_name,
    nesting_depth,
    parse_response,
)

__all__ = ["FINISH_NAMES", "MAX_NAME", "MAX_NESTING", "NONE_NAMES", "canonical_name", "extract_json",
           "nesting_depth", "outside_fences", "parse_actions", "parse_response", "strings_in"]
