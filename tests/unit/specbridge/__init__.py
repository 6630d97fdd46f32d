"""Tests of chapter 19 (SpecBridge)."""
