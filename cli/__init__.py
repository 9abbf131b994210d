"""Tokenline: live LLM token boundaries, counts and context-window budgets while you write."""

__version__ = "0.1.0"
