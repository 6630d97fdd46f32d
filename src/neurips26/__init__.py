"""neurips26: the library behind *NeurIPS 2026, Executable*.

One subpackage per chapter (``neurips26.thwf``, ...) and a few shared parts
(``scales``, ``claims``, ``cache``, ``plotting``). Chapter subpackages import
shared parts, never each other.
"""

__version__ = "0.1.0"
