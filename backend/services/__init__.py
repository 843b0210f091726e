"""What routes share beyond their dependencies: agent runs, audit, uploads, streaming, the clock."""
