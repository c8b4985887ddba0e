"""Utility functions: ``get_array_module``, ``show_config``."""
