"""Rendering of inspection reports (DOT, SVG, rich tables)."""
