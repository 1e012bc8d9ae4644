import sys

from reasonaudio.cli import main

sys.exit(main())
