"""The Playground: its sentences, its download buttons and the CSV and "Reproduce in Python" scripts behind them."""
