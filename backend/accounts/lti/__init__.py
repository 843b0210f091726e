"""LTI 1.3 resource-link launches (IMS LTI 1.3 core): the third-party-initiated login (login.py), the
launch's ID token checked against the platform's keys (keys.py, launch.py), the person, course and
membership it stands for (people.py), and the pages it answers with (pages.py). joserfc does the JOSE
work; pylti1p3 is not used (its last release is from 2022 and it is bound to Django/Flask)."""
