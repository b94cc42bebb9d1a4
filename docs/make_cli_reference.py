"""Write docs/cli.md, the reference of the ``cctx-research`` command, from its parser.

Run from the repository root after changing a command or an option::

    .venv/bin/python docs/make_cli_reference.py           # rewrite docs/cli.md
    .venv/bin/python docs/make_cli_reference.py --check   # exit 1 if docs/cli.md is stale

``tests/test_docs.py`` fails while the committed page differs from what this
renders. The page is drawn from the parser's actions, not from argparse's own
help text, so that it is the same on every Python version and terminal width.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cctx_research.cli import build_parser

PAGE = Path(__file__).resolve().parent / "cli.md"
PROG = "cctx-research"
# accepted by every command, before or after its name: listed once, with the program
_SHARED = {"-h", "--log-level", "-v"}


def _value(action: argparse.Action) -> str:
    """What follows an option, or a positional's name, as argparse would write it."""
    if action.metavar is not None:
        name = str(action.metavar)
    elif action.choices is not None:
        name = "{" + ",".join(str(c) for c in action.choices) + "}"
    else:
        name = action.dest if not action.option_strings else action.dest.upper()
    if action.nargs == "+":
        return f"{name} [{name} ...]"
    if action.nargs == "?":
        return f"[{name}]"
    return name


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def _spelling(action: argparse.Action) -> str:
    """The argument as written in a table: every option string, then its value."""
    if not action.option_strings:
        return _value(action)
    names = ", ".join(action.option_strings)
    return f"{names} {_value(action)}" if _takes_value(action) else names


def _usage_part(action: argparse.Action) -> str:
    if not action.option_strings:
        return _value(action)
    first = action.option_strings[0]
    part = f"{first} {_value(action)}" if _takes_value(action) else first
    return part if action.required else f"[{part}]"


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%" in text:  # argparse's own expansion: %(default)s, %(prog)s
        fields = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
        text = text % {**fields, "prog": prog}
    return text


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _arguments(actions: list[argparse.Action], prog: str) -> list[str]:
    rows = ["| argument | meaning |", "|---|---|"]
    for action in actions:
        rows.append(f"| `{_cell(_spelling(action))}` | {_cell(_help(action, prog))} |")
    return rows


def _own(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's arguments, without help and the options every command shares."""
    return [
        a
        for a in parser._actions
        if not _SHARED & set(a.option_strings) and not isinstance(a, argparse._SubParsersAction)
    ]


def _commands(parser: argparse.ArgumentParser) -> tuple[argparse.Action, dict[str, str]]:
    (group,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    summaries = {choice.dest: choice.help or "" for choice in group._choices_actions}
    return group, summaries


def _section(name: str, sub: argparse.ArgumentParser, summary: str) -> list[str]:
    prog = f"{PROG} {name}"
    own = _own(sub)
    usage = " ".join([prog, *(_usage_part(a) for a in own if a.option_strings),
                      *(_usage_part(a) for a in own if not a.option_strings)])  # fmt: skip
    lines = [f"## `{prog}`", "", summary[:1].upper() + summary[1:] + ".", ""]
    if sub.description:
        lines += [sub.description, ""]
    lines += ["```text", usage, "```", ""]
    return lines + _arguments(own, prog) + [""]


def render() -> str:
    """The whole page, as docs/cli.md holds it."""
    parser = build_parser()
    group, summaries = _commands(parser)
    shared = [a for a in parser._actions if _SHARED & set(a.option_strings) or a.dest == "version"]
    lines = [
        "# The `cctx-research` command",
        "",
        "<!-- Generated from the parser by docs/make_cli_reference.py: edit the commands, "
        "then run it. -->",
        "",
        f"{parser.description}",
        "",
        "```text",
        f"{PROG} [-h] [--version] [--log-level LEVEL] [-v] COMMAND [options]",
        "```",
        "",
        "Options of the program; `--log-level` and `-v` are also accepted after the command's "
        "name, and `-h` shows any command's help.",
        "",
        *_arguments(shared, PROG),
        "",
        "| command | what it does |",
        "|---|---|",
        *(f"| [`{name}`](#{PROG}-{name}) | {_cell(summaries[name])} |" for name in group.choices),
        "",
    ]
    for name, sub in group.choices.items():
        lines += _section(name, sub, summaries[name])
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/cli.md is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            sys.stderr.write(f"{PAGE} is stale: run python docs/make_cli_reference.py\n")
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(PAGE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
