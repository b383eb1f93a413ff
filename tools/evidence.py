#!/usr/bin/env python3
"""tools/evidence.py: the command line of reduction/evidence.py (--help says what it does)."""
import sys
from reduction.evidence import main
sys.exit(main(sys.argv[1:]))
