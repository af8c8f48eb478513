"""Opens the artifact named on the command line through the Python bindings
and prints its inputs (errors propagate as exceptions)."""
import sys

import gacc

print(gacc.Trainer.open(sys.argv[1]).inputs)
