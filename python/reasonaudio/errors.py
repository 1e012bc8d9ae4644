"""Errors meant for the user: one clear sentence naming the file, row and what was expected."""


class UserError(Exception):
    """Bad input or a refused operation; the CLI prints it without a traceback."""


class ValidationError(UserError):
    """A benchmark directory or table breaks the contract."""
