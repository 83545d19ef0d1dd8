"""`python -m kopf` is the same as the `kopf` command."""
from kopf.cli import main

if __name__ == '__main__':
    main()
