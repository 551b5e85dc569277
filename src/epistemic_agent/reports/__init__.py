"""Read-only projections of the record: RATIONALE.md, stats, diff, plots, HTML, audit bundles."""
