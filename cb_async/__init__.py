"""cb-async: a chess engine daemon (UCI, XBoard/CECP v2, CNP) and an embeddable async library."""

__version__ = "0.1.0"
