"""Chart, table and image builders shared by pages: heatmaps on shared colour scales, bars, Vega-Lite specs, text alternatives."""
