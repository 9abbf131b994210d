"""`python -m tokenline.server [--tcp HOST:PORT]`: the language server."""

from tokenline.server.app import main

# Guarded: a child process the server spawns (server/childencode.py) imports this module again.
if __name__ == "__main__":
    raise SystemExit(main())
