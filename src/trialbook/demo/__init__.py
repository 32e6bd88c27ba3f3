"""What `make demo` runs: until the harness lands, a seeded synthetic ledger, scored."""

from trialbook.demo._synthetic import synthetic_rows, write_synthetic_ledger

__all__ = ["synthetic_rows", "write_synthetic_ledger"]
