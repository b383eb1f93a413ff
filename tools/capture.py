#!/usr/bin/env python3
"""tools/capture.py: the command line of reduction/capture.py (--help says what it does)."""
import sys
from reduction.capture import main
sys.exit(main(sys.argv[1:]))
