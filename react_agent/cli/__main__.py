import sys

from react_agent.cli._main import main

sys.exit(main())
