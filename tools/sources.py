#!/usr/bin/env python3
"""tools/sources.py: the command line of reduction/sources.py (--help says what it does)."""
import sys
from reduction.sources import main
sys.exit(main(sys.argv[1:]))
