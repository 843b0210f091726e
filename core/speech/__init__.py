"""Offline speech for audio overviews: which voice speaks each language (voices.py), turning a script's
lines into one recording with each line's timing (render.py), and OGG/MP3 files of it (encode.py)."""
