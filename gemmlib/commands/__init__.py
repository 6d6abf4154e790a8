"""One module per CLI command; see gemmlib/cli.py for the contract."""
