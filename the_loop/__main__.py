"""Allow `python -m the_loop`."""

from the_loop.cli import main

if __name__ == "__main__":
    main()
