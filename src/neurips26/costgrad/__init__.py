"""Chapter 13: COSTGRAD — choose a token world model's planning tokens by one gradient of the goal cost."""
