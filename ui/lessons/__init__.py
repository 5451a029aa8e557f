"""What serves one page only, a folder per page named as its file (pages/Step_by_step.py -> lessons/step_by_step/)."""
