"""Chapter 12 (sparse internal control) tests."""
