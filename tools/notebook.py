#!/usr/bin/env python3
"""tools/notebook.py: the command line of reduction/notebook.py (--help says what it does)."""
import sys
from reduction.notebook import main
sys.exit(main(sys.argv[1:]))
