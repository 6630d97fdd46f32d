"""Chapter 14: SparseVideoNav — imagine a sparse long future with a video generator, then act on it."""
