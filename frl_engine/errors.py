"""Errors a user can act on.

Every problem with the user's data, settings or model files is raised as one of
these, with a one-line message that names the problem and says what to do.
The CLI prints the message and exits with status 2; the dashboard shows it on
the page.  Anything else reaching the user is a bug.
"""

import contextlib
import warnings


class FRLError(ValueError):
    """Base class for errors caused by the user's input, not by a bug."""


class DataError(FRLError):
    """The data table cannot be used as given (empty, wrong target, junk values...)."""


class MissingOutcomeError(DataError):
    """The outcome column has empty cells (patients lost to follow-up); ``n_missing`` says how many."""

    def __init__(self, message: str, n_missing: int):
        super().__init__(message)
        self.n_missing = n_missing


class RuleMiningError(FRLError):
    """Rule mining found no usable rule, or far too many."""


class ModelFileError(FRLError):
    """A file that should hold a falling rule list model does not."""


class PossibleLeakWarning(UserWarning):
    """A fitted list separates its training outcome almost perfectly, or uses a column named like the outcome:
    probably a column recorded after the outcome or copied from it (the command line and the dashboard say so
    in their own words, and silence this warning)."""


class RepeatedRecordsWarning(UserWarning):
    """The training table repeats records: rows equal to an earlier row in every column, record number included
    (:mod:`frl_engine.repeated_rows`).  The command line and the dashboard say so in their own words."""


class FewPatientsWarning(UserWarning):
    """The training table holds fewer than 10 patients with the event, or without it
    (:func:`frl_engine.search_report.few_patients_text`): the list says little about new patients.  The command
    line and the dashboard say so in their own words."""


@contextlib.contextmanager
def quiet_possible_leak():
    """A context in which :class:`PossibleLeakWarning`, :class:`FewPatientsWarning` and :class:`RepeatedRecordsWarning`
    are not shown: the fits of the folds of a cross-validation, where the warning would repeat once per fold (and
    from worker processes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PossibleLeakWarning)
        warnings.simplefilter("ignore", FewPatientsWarning)
        warnings.simplefilter("ignore", RepeatedRecordsWarning)   # said once for the whole table
        yield
