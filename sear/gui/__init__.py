"""Qt front ends (PySide6). Nothing outside this package imports Qt."""
