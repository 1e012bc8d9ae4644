"""`reasonaudio completion SHELL`: print the shell's completion script for every command, subcommand
and option (generated from the parser by shtab).

  bash:  reasonaudio completion bash > ~/.local/share/bash-completion/completions/reasonaudio
  zsh:   reasonaudio completion zsh > ~/.zfunc/_reasonaudio   (with `fpath+=~/.zfunc` before compinit)
  tcsh:  reasonaudio completion tcsh > ~/.reasonaudio.tcsh && echo 'source ~/.reasonaudio.tcsh' >> ~/.tcshrc
"""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "tcsh")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("completion", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    print(shtab.complete(args.full_parser(), shell=args.shell), end="")
    return 0
