"""The engine's name, author and version: the one place they are written.

A module of its own so that `cb-async --version`, the session's `Identity` and the embedded
library read them without importing anything else of the package.
"""

ENGINE_NAME = "cb-async"
ENGINE_AUTHOR = "The cb-async developers"
__version__ = "0.1.0"
