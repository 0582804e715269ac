"""gradviz."""
