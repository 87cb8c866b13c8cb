"""Makes the in-tree package importable when it is not installed. Which
libdfexec the tests use is the package's own lookup: DFEXEC_LIBRARY when set
(run_tests.sh sets it), else the system loader, else ../build."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
