"""`python -m referee.human --tty TERMINAL`: a person's seat (see `referee.human`)."""

from .seat import main

raise SystemExit(main())
