"""`python -m tokenline.server [--tcp HOST:PORT]`: the language server."""

from tokenline.server.app import main

raise SystemExit(main())
