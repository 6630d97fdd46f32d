"""Baselines of chapter 18 (IOHP): the methods IOHP is compared with (§4)."""
