from core.settings import Settings
from workers.main import run

if __name__ == "__main__":
    run(Settings())
