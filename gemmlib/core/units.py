"""Byte units (binary), used wherever sizes are checked or printed."""

KiB = 1024
MiB = 1024**2
GiB = 1024**3
