#!/usr/bin/env python3
"""tools/readme.py: the command line of reduction/readme.py (--help says what it does)."""
import sys
from reduction.readme import main
sys.exit(main(sys.argv[1:]))
