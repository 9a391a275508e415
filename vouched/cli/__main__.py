"""`python -m vouched.cli`: the same as the `vouched` command."""

from vouched.cli import main

if __name__ == "__main__":  # imported (pkgutil.walk_packages in tests), it runs nothing
    main()
