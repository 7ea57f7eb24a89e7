"""Text -> decision: the bounded parser of the model's replies, lenient JSON, and block extraction."""

from react_agent.parsing._extract import extract_json
from react_agent.parsing._multi import parse_actions
from react_agent.parsing._parser import FINISH_NAMES, MAX_NAME, NONE_NAMES, canonical_name, parse_response

__all__ = ["FINISH_NAMES", "MAX_NAME", "NONE_NAMES", "canonical_name", "extract_json", "parse_actions",
           "parse_response"]
