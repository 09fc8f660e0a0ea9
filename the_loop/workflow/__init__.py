"""What the commands do: new/approve/work-on, task transitions, briefs, status and reports."""
