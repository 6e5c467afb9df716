"""The guarded parameter sweep: settings, runs, selection, report."""
