"""Chapter 18: IOHP — interaction-oriented human proxies for usable indoor layouts."""
