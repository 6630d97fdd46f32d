"""MiniVerina task data written by hand (see ``neurips26.specbridge.benchmark``)."""
