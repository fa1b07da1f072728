"""How the command line fails: one line on stderr and a non-zero exit code, never a traceback.

``main`` runs the typer app without click's standalone handling and turns every exception into
``error: <what went wrong>``: usage mistakes (bad option or value) exit 2, everything else 1
(an interrupted command 130). ``fail`` is for commands that detect a failure themselves (a
failed A2A task, for example).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NoReturn

import httpx
import typer
from a2a.utils.errors import A2AError
from typer._click.core import Command
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError

from smartctx.core.errors import SmartCtxError

USAGE_EXIT = 2


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def say_error(message: str) -> None:
    """Print ``error: message`` as one line on stderr (never wrapped)."""
    print(f"error: {_one_line(message)}", file=sys.stderr, flush=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print one error line and exit with ``code``."""
    say_error(message)
    raise typer.Exit(code)


def describe(exc: BaseException) -> str:
    """One line saying what ``exc`` means for the user (no traceback, no internals)."""
    if isinstance(exc, SmartCtxError):
        return f"{exc.code}: {exc.message}"
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return f"bad URL: {str(exc).rstrip('.')}; use one like http://127.0.0.1:8000"
    if isinstance(exc, httpx.TimeoutException):
        return f"the server at {_url_of(exc)} did not answer in time"
    if isinstance(exc, httpx.TransportError):
        return (
            f"cannot reach the server at {_url_of(exc)} ({type(exc).__name__}): is "
            "`smartctx serve` running there?"
        )
    if isinstance(exc, A2AError):
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, httpx.HTTPError):
            return describe(cause)
        return f"the A2A server refused the request: {exc.message}"
    if isinstance(exc, OSError):
        return f"{exc.strerror or type(exc).__name__}: {exc.filename or exc}"
    return f"unexpected {type(exc).__name__}: {exc}"


def _url_of(exc: httpx.HTTPError) -> str:
    try:
        url = exc.request.url
    except RuntimeError:
        return "the given URL"
    return f"{url.scheme}://{url.netloc.decode()}"


def run(command: Command, argv: Sequence[str] | None = None) -> int:
    """Run ``command`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    try:
        result = command.main(
            args=list(argv) if argv is not None else None,
            prog_name="smartctx",
            standalone_mode=False,
        )
    except NoArgsIsHelpError as err:
        if err.ctx is not None:
            print(err.ctx.get_help())
        return 0
    except UsageError as err:
        where = err.ctx.command_path if err.ctx is not None else "smartctx"
        say_error(f"{err.format_message()} (see `{where} --help`)")
        return USAGE_EXIT
    except ClickException as err:
        say_error(err.format_message())
        return err.exit_code
    except typer.Abort:
        say_error("aborted")
        return 1
    except KeyboardInterrupt:
        say_error("interrupted")
        return 130
    except Exception as err:
        say_error(describe(err))
        return 1
    return result if isinstance(result, int) else 0
