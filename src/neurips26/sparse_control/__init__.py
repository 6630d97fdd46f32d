"""Chapter 12: sparse internal control of a frozen language model — candidate (site, direction) nodes,
their linearised effect on a behaviour, Driver-OMP and Coverage-Driver, the baselines, and the six axes
that tell control from a one-off effect."""
