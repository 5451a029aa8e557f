"""The classroom: predict-then-reveal, the class pulse's page side, and the preset experiments."""
