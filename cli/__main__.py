"""`python -m tokenline ...` is the `tokenline` command."""

from tokenline.cli import main

raise SystemExit(main())
