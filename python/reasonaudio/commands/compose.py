"""`reasonaudio compose` (placeholder until its owner lands it)."""


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("compose", help="(not implemented yet)")
    parser.set_defaults(func=lambda args: (_ for _ in ()).throw(NotImplementedError("compose")))
