"""Unit tests of neurips26.spark_vla."""
