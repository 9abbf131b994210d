"""Tokenline's language server (pygls): adapts LSP to tokenline.core."""
