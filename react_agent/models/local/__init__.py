"""The embedded local model: llama.cpp with decoding constrained by the decision's JSON schema."""
