#!/usr/bin/env python3
"""tools/plot.py: the command line of reduction/plot.py (--help says what it does)."""
import sys
from reduction.plot import main
sys.exit(main(sys.argv[1:]))
