"""The errors reasonaudio raises on purpose, in one hierarchy shared with the Rust core.

`UserError` is what the CLI prints as one line (exit 2): bad input or a refused operation, in a
sentence naming the file, row and what was expected.

`CoreError` and its kinds are raised by the Rust extension (`reasonaudio._core`; the bindings in
rust/python/src import these classes by name), as polars and pydantic-core do. Each kind also
subclasses the builtin exception the bindings raised before this hierarchy existed (`ValueError`,
`OSError`, `TypeError`), so callers that catch those keep working. Python code that turns a core
error into a message for the user wraps it in a `UserError` with the context it knows.

Ctrl-C inside a long core call raises the builtin `KeyboardInterrupt`, never one of these.
"""


class ReasonAudioError(Exception):
    """Base of every error reasonaudio raises on purpose."""


class UserError(ReasonAudioError):
    """Bad input or a refused operation; the CLI prints it without a traceback."""


class ValidationError(UserError):
    """A benchmark directory or table breaks the contract."""


class CoreError(ReasonAudioError):
    """An input the Rust core refused; the message names the column, row, clip or query."""


class PlanError(CoreError, ValueError):
    """Planner parameters that break their rules, or a clip request the planner cannot satisfy."""


class AnnotateError(CoreError, ValueError):
    """Inputs of the relevance engine that do not fit together (label vocabulary, query ids)."""


class LogicError(AnnotateError):
    """A query's logic is malformed (§2): the message names the query and the constraint. One class
    for both readers of logic, the Rust engine and the contract's own reader (`contract.logic`)."""


class EventError(AnnotateError):
    """An event row given to the relevance engine is out of range or inconsistent."""


class MixError(CoreError, ValueError):
    """Render columns or options the mixer refuses: lengths, order, atom index, event outside its clip."""


class ColumnTypeError(CoreError, TypeError):
    """A column handed to the core is not a 1-D numpy array of the dtype it needs."""


class AudioWriteError(CoreError, OSError):
    """A rendered clip could not be encoded or written; the message names the clip and the path."""


class ResampleError(CoreError, ValueError):
    """Sample rates the resampler cannot work with."""


class AtomError(CoreError, ValueError):
    """Input the atom library functions refuse (a sample rate too low, non-finite samples)."""


def require(module: str, extra: str | None = "models", purpose: str = "this model", hint: str | None = None):
    """Import the optional package `module` or raise a one-line `UserError` naming what needs it
    and how to install it: the one way reasonaudio imports an optional dependency, so that a missing
    package is exit 2 with an install hint, never an internal error with a traceback.

    `extra` is the pyproject extra that provides it (`pip install 'reasonaudio[EXTRA]'`); `hint`, a
    whole phrase ("install it with ..."), replaces that advice for packages no extra carries. Any
    ImportError counts as missing: a package that is installed but cannot be imported (a broken
    dependency of its own) is equally unusable, and its message is kept in the line.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        advice = hint or ("install it: " + (f"pip install 'reasonaudio[{extra}]'" if extra else f"pip install {module}"))
        package = module.split(".")[0]  # the distribution to install is named after the top package
        raise UserError(f"{purpose} needs the Python package {package!r} ({err}); {advice}") from None
