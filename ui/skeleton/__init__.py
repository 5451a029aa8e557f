"""The page skeleton: what every page does the same way (top, controls, ending), the page list, shared pickers."""
