"""The grammar of `--model SPEC`, shared by the registry and every adapter that takes options.

- a spec is `NAME[:ARGUMENT]`; the argument keeps any further colons (Windows paths, nested specs);
- an adapter's argument is often `PATH[,key=value...]` (`parse_options`), the keys it accepts named;
- `two-stage:CAPTIONER+RANKER` splits at the *last* `+` (a captioner's path may contain `+`);
- each two-stage part is `NAME[=VALUE]`; `NAME:VALUE` is read the same way (`st:DIR` was always
  accepted as a ranker), whichever separator comes first wins, so a value may hold the other one.

Which names exist is the registry's business (reasonaudio.retrieval.registry); this module only
splits text, so it imports nothing but the error type.
"""

from __future__ import annotations

from reasonaudio.errors import UserError


def split_spec(spec: str) -> tuple[str, str | None]:
    """`NAME[:ARGUMENT]` -> (NAME, ARGUMENT or None when there is no colon)."""
    name, sep, argument = spec.strip().partition(":")
    return name, (argument if sep else None)


def parse_options(argument: str | None, where: str, allowed: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """`PATH[,key=value...]` -> (PATH, {key: value}); unknown keys are refused by name.

    `where` is the spec as written up to the argument (`"lco-omni:"`, `"two-stage:stepaudio="`), so
    messages quote what the user typed."""
    if not argument:
        raise UserError(f"--model {where}PATH needs the local path of the model's weights")
    head, *rest = argument.split(",")
    options: dict[str, str] = {}
    for item in rest:
        key, sep, value = item.partition("=")
        if not sep or key not in allowed or not value:
            raise UserError(
                f"--model {where}{argument}: option {item!r} not understood; expected "
                + (", ".join(f"{k}=VALUE" for k in allowed) if allowed else "no options")
            )
        options[key] = value
    return head, options


def split_two_stage(argument: str | None) -> tuple[str, str] | None:
    """`CAPTIONER+RANKER` -> (CAPTIONER, RANKER), or None when there is no `+`."""
    if not argument or "+" not in argument:
        return None
    captioner, _, ranker = argument.rpartition("+")
    return captioner, ranker


def split_part(part: str) -> tuple[str, str | None]:
    """A two-stage part `NAME[=VALUE]` (or `NAME:VALUE`) -> (NAME, VALUE or None without a separator)."""
    cuts = [i for i in (part.find("="), part.find(":")) if i >= 0]
    if not cuts:
        return part, None
    cut = min(cuts)
    return part[:cut], part[cut + 1 :]
