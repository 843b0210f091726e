"""The jobs: their specs and the one enqueue (specs.py, all the API imports), one lifecycle for all of
them (framework.py), and each kind's body (index, notes, judge, study)."""
