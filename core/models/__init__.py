"""Tokenizer models shipped inside the package (data only)."""
