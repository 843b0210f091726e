"""The study loop's pure logic: FSRS scheduling (the fsrs package), the attempt-to-rating rule, the
queue's order and exam mode, the mastery model and parameter optimisation. No I/O here: the SQL is in
core/store/study/study.py, and core/study/service.py joins the two."""
