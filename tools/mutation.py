#!/usr/bin/env python3
"""tools/mutation.py: the command line of reduction/mutation.py (--help says what it does)."""
import sys
from reduction.mutation import main
sys.exit(main(sys.argv[1:]))
