"""Whether the MAP search's chains agreed on the best list (no numba: the dashboard imports it cheaply).

The search (:func:`frl_engine.anneal.anneal`) runs independent chains and
restarts until at least two of them end at the same best objective *and* few
further chains would end at a list none has found yet.  This module holds the
plain record of how that went, written to the model file (``search``,
docs/model-format.md) and shown by the CLI, the dashboard and the card.

Why the second condition.  Each chain ends at a local maximum of the objective.
Two chains agreeing on the best one is evidence only when the chains' ends are
few and repeated.  On UCI Spambase (5,000 candidate rules) about half of the
chains end at one common list, and the rest at lists no other chain reaches;
about one chain in twelve ends at a *better* list.  There, "two chains agree"
was met by the common list on most seeds.  The number of different lists the
chains ended at says how much of the search space is still unexplored:
with ``n`` chains (random starts) ending at ``w`` different local maxima, the
posterior expected share of starts that would end at a local maximum not found
yet is::

    Omega = w (w + 1) / (n (n - 1))

(Boender & Rinnooy Kan 1987, "Bayesian stopping rules for multistart global
optimization methods", Math. Programming 37: 59-80; uniform prior on
the number of local maxima and on their basins' relative sizes).  The search
counts as converged when ``Omega <= UNSEEN_SHARE_MAX``.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass

import numpy as np

# Two chains "reach" the same objective when they agree to this many nats (the exact objective is
# computed to ~1e-9; distinct lists differ by far more unless they capture exactly the same rows).
AGREEMENT_TOL = 1e-6
# The search counts as converged only when at most this share of further chains would end at a list
# not found yet (:func:`unseen_share`): one chain in ten.  Measured (docs/search.md section 1): chains that
# all agree give 1/6 after one round of 4 and 1/28 after two; UCI breast cancer and mammographic masses fall
# below it within 8 to 20 chains; UCI Spambase stays at 0.21 to 0.42 through 16 chains (ends at 7 to 9
# different lists).  It was one in five (0.2) until session 50: on a 50,000-row table whose risk is smooth,
# the four chains of one seed's first round all ended at one list (1/6), 7.9 nats below the list two of
# twelve chains of another seed reached, and the search called it converged (step 8).
UNSEEN_SHARE_MAX = 0.1


def unseen_share(n_chains: int, n_distinct: int) -> float:
    """The expected share of further starts that would end at a local maximum not found yet.

    Boender & Rinnooy Kan (1987): after ``n`` independent starts of a local
    search that ended at ``w`` different local maxima, under a uniform prior on the number
    of local maxima and on the relative sizes of their basins of attraction, the posterior
    expected total relative size of the basins not yet found is ``w (w + 1) / (n (n - 1))``.
    It is 1 (nothing known) for fewer than two starts, and capped at 1.

    Examples: 4 chains at one list: 1/6; 4 chains at two lists: 1/2; 8 chains at two: 3/28;
    16 chains at nine: 0.375.
    """
    n, w = int(n_chains), int(n_distinct)
    if n < 2:
        return 1.0
    return min(1.0, w * (w + 1) / (n * (n - 1)))


def count_distinct(values, tol: float = AGREEMENT_TOL) -> int:
    """How many different objectives the chains ended at: values within ``tol`` of the previous (sorted) one
    count as the same local maximum."""
    ordered = np.sort(np.asarray(values, dtype=float))
    if len(ordered) == 0:
        return 0
    return int(1 + np.sum(np.diff(ordered) > tol))


@dataclass(frozen=True)
class SearchReport:
    """Whether the MAP search's independent chains agreed on the best list.

    Attributes
    ----------
    n_chains : int
        Chains run, restarts included.
    n_reached_best : int
        Chains whose final (polished) list reached the best objective, to ``AGREEMENT_TOL`` nats.
    spread_nats : float
        Best objective minus the worst chain's: 0 when every chain found the same optimum.
    runner_up_gap_nats : float
        Best objective minus the best objective of the chains that did *not* reach it
        (``None`` when every chain reached it): how far the nearest competing list is.
    converged : bool
        At least two independent chains reached the best objective, and at most
        ``UNSEEN_SHARE_MAX`` of further chains would end at a list not found yet
        (``unseen_share``).
    max_chains : int
        The budget of chains the search could spend.
    n_hopped : int or None
        Chains whose polished list basin hopping (:mod:`frl_engine.basin`) improved
        (None: the search did not basin-hop).
    hop_gain_nats : float or None
        The largest such improvement, in nats (None: no basin hopping).
    n_distinct : int or None
        Different objectives (local maxima) the chains ended at (None: a model file written before
        this was recorded).
    unseen_share : float or None
        :func:`unseen_share`: the expected share of further chains that would end at a list none
        has found yet (None: as ``n_distinct``).
    n_walks : int or None
        Posterior walk stages run after the chains had not converged (:mod:`frl_engine.walk`; None:
        none ran).
    walk_gain_nats : float or None
        How much better the walks' best list is than every chain's (0: they found nothing better;
        None: no walks).  When positive, the best list is the walks' and no chain reached it.
    """

    n_chains: int
    n_reached_best: int
    spread_nats: float
    runner_up_gap_nats: float | None
    converged: bool
    max_chains: int
    n_hopped: int | None = None
    hop_gain_nats: float | None = None
    n_distinct: int | None = None
    unseen_share: float | None = None
    n_walks: int | None = None
    walk_gain_nats: float | None = None

    @property
    def walk_found_better(self) -> bool:
        """The printed list came from a posterior walk, better than every chain's list."""
        return bool(self.walk_gain_nats is not None and self.walk_gain_nats > AGREEMENT_TOL)

    @property
    def unexplored(self) -> bool:
        """The best list was reached by two chains, but too many chains ended at lists no other reached."""
        return (not self.converged and self.n_reached_best >= 2 and self.unseen_share is not None
                and self.unseen_share > UNSEEN_SHARE_MAX and not self.walk_found_better)

    def message(self, interface: str = "cli") -> str:
        """One plain sentence for the user: what was found and, if not converged, what to do (in the
        terms of the command line, or of the dashboard's Fit page when ``interface="dashboard"``)."""
        hops = ""
        if self.n_hopped:
            hops = (f"; basin hopping improved {self.n_hopped} of the chains' polished lists, by up to "
                    f"{self.hop_gain_nats:.2f} nats")
        if self.converged:
            checked = f", and {self._walks_text()} from it found nothing better" if self.n_walks else ""
            return (f"Search converged: {self.n_reached_best} of {self.n_chains} independent chains reached the "
                    f"same best list (spread {self.spread_nats:.2f} nats{self._others_text()}{hops}){checked}.")
        if self.n_chains < 2:
            return ("Search not checked: only one chain ran, so nobody can tell whether a better list exists; "
                    "use 2 or more chains" + (" (Chains on the Fit page)." if interface == "dashboard" else "."))
        what = ("raise Steps per chain or Chains on the Fit page and fit again" if interface == "dashboard"
                else "use more steps (--steps) or more chains (--chains)")
        walks = f"; {self._walks_text()} from the best lists found nothing better" if self.n_walks else ""
        more_chains = ("raise Chains on the Fit page and fit again" if interface == "dashboard"
                       else "use more chains (--chains)")
        if self.walk_found_better:
            ended, source = (("all ended at one list", "it") if self.n_distinct == 1
                             else (f"ended at {self.n_distinct} different lists", "the best of them"))
            return (f"Search not converged: the {self.n_chains} chains {ended}, "
                    f"and {self._walks_text()} from {source}, with a wider search over the lower rules of the "
                    f"best list, found a list {self._nats(self.walk_gain_nats)} "
                    f"better than any chain's, which is the one printed; no chain reached it, so a better one may "
                    f"exist and another run may print a different list: {more_chains}.")
        if self.unexplored:
            why = (f"{self.n_chains} chains are too few to tell whether others would end elsewhere: about"
                   if self.n_distinct == 1 else f"the chains ended at {self.n_distinct} different lists, so about")
            return (f"Search not converged: {self.n_reached_best} of {self.n_chains} chains reached the same best "
                    f"list, but {why} {self._share_text()} of further chains would end at a list none has found "
                    f"yet, which may be better{walks}; another run may print a different list: {more_chains}.")
        return (f"Search not converged: only {self.n_reached_best} of {self.n_chains} chains reached the best list "
                f"(the next best chain is {self._gap_text()} worse, the worst {self.spread_nats:.1f} nats{walks}); "
                f"another run may print a different list: {what}.")

    def _walks_text(self) -> str:
        return "a walk of the posterior" if self.n_walks == 1 else f"{self.n_walks} walks of the posterior"

    def _others_text(self) -> str:
        """For a converged search: where the chains that did not reach the best list ended (read beside "converged",
        "the chains ended at 2 different lists" sounded like a contradiction)."""
        if self.n_distinct is None or self.n_distinct == 1:
            return self._distinct_text()
        others = self.n_chains - self.n_reached_best
        if others < 1:
            return self._distinct_text()
        lists = self.n_distinct - 1
        return (f"; the other {others} ended at {'a lower list' if lists == 1 else f'{lists} lower lists'}, and about "
                f"{self._share_text()} of further chains would end at a list not found yet")

    def _distinct_text(self) -> str:
        if self.n_distinct is None:
            return ""
        if self.n_distinct == 1:
            return "; every chain ended at this list"
        return (f"; the chains ended at {self.n_distinct} different lists, and about {self._share_text()} of "
                f"further chains would end at one not found yet")

    def _share_text(self) -> str:
        """``unseen_share`` as a whole percentage (never 0% or 100% unless exact)."""
        share = float(self.unseen_share or 0.0)
        if 0.0 < share < 0.01:
            return "1%"
        return f"{min(round(100 * share), 99 if share < 1 else 100)}%"

    def _gap_text(self) -> str:
        return self._nats(self.runner_up_gap_nats if self.runner_up_gap_nats is not None else self.spread_nats)

    @staticmethod
    def _nats(gap: float) -> str:
        return f"{gap:.3f} nats" if gap < 0.1 else f"{gap:.1f} nats"

    def to_dict(self) -> dict:
        """JSON-safe dictionary (the model file's ``search`` block; docs/model-format.md)."""
        from .io import to_jsonable

        data = {"n_chains": self.n_chains, "n_reached_best": self.n_reached_best, "spread_nats": self.spread_nats,
                "runner_up_gap_nats": self.runner_up_gap_nats, "converged": self.converged,
                "max_chains": self.max_chains}
        if self.n_hopped is not None:
            data.update(n_hopped=self.n_hopped, hop_gain_nats=self.hop_gain_nats)
        if self.n_distinct is not None:
            data.update(n_distinct=self.n_distinct, unseen_share=self.unseen_share)
        if self.n_walks is not None:
            data.update(n_walks=self.n_walks, walk_gain_nats=self.walk_gain_nats)
        return to_jsonable(data)

    @classmethod
    def from_dict(cls, data: dict) -> "SearchReport":
        gap = data.get("runner_up_gap_nats")
        hopped, gain = data.get("n_hopped"), data.get("hop_gain_nats")
        distinct, unseen = data.get("n_distinct"), data.get("unseen_share")
        walks, walk_gain = data.get("n_walks"), data.get("walk_gain_nats")
        return cls(n_chains=int(data["n_chains"]), n_reached_best=int(data["n_reached_best"]),
                   spread_nats=float(data["spread_nats"]), runner_up_gap_nats=None if gap is None else float(gap),
                   converged=bool(data["converged"]), max_chains=int(data.get("max_chains", data["n_chains"])),
                   n_hopped=None if hopped is None else int(hopped),
                   hop_gain_nats=None if gain is None else float(gain),
                   n_distinct=None if distinct is None else int(distinct),
                   unseen_share=None if unseen is None else float(unseen),
                   n_walks=None if walks is None else int(walks),
                   walk_gain_nats=None if walk_gain is None else float(walk_gain))


def search_report(chain_values, max_chains: int | None = None, polished_values=None, walk_values=None,
                  n_walks: int | None = None) -> SearchReport:
    """The :class:`SearchReport` of a set of chains' final objectives.

    ``polished_values``: each chain's objective before basin hopping, when the search hopped.
    ``walk_values``: the objectives the posterior walks ended at (:mod:`frl_engine.walk`), when ``n_walks``
    stages ran; the best list is then the best of the chains' and the walks', and when a walk's is
    better no chain reached it (the search has not converged).
    """
    values = np.asarray(chain_values, dtype=float)
    n_hopped = gain = None
    if polished_values is not None:
        gains = values - np.asarray(polished_values, dtype=float)
        n_hopped, gain = int((gains > AGREEMENT_TOL).sum()), float(max(gains.max(), 0.0))
    best = float(values.max())
    walk_gain = None
    if n_walks:
        walk_gain = max(float(np.max(walk_values)) - best, 0.0) if len(walk_values) else 0.0
        best += walk_gain if walk_gain > AGREEMENT_TOL else 0.0
    reached = values >= best - AGREEMENT_TOL
    others = values[~reached]
    n_distinct = count_distinct(values)
    unseen = unseen_share(len(values), n_distinct)
    return SearchReport(n_chains=len(values), n_reached_best=int(reached.sum()), spread_nats=best - float(values.min()),
                        runner_up_gap_nats=best - float(others.max()) if len(others) else None,
                        converged=bool(reached.sum() >= 2 and unseen <= UNSEEN_SHARE_MAX),
                        max_chains=int(max_chains or len(values)), n_hopped=n_hopped, hop_gain_nats=gain,
                        n_distinct=n_distinct, unseen_share=unseen,
                        n_walks=int(n_walks) if n_walks else None, walk_gain_nats=walk_gain)


#: How each interface names the settings an empty list's note suggests.
SETTING_NAMES = {
    "cli": {"conditions": "--max-conditions 1", "support": "a higher --min-support", "lower": "a lower --min-support"},
    "dashboard": {"conditions": "1 condition per rule", "support": "a higher minimum support",
                  "lower": "a lower minimum support"},
}


def empty_list_note(model: dict, interface: str = "cli") -> str:
    """What an empty MAP list means, and what to try.

    Each rule on the list pays a prior cost of about ``log |B|`` nats (the paper's rule prior, Section 3:
    a rule is drawn among the ``|B|`` unchosen candidates), so with few events a real but modest
    difference in risk may not pay for itself; fewer, broader candidates lower that cost.
    """
    names = SETTING_NAMES[interface]
    training = model.get("training") or {}
    n_rules, events = training.get("n_candidate_rules") or 0, training.get("n_positive")
    cost = f", about log({n_rules:,} candidate rules) = {math.log(n_rules):.1f} nats" if n_rules > 1 else ""
    noun = "event" if events == 1 else "events"
    few = (f"; with {events:,} {noun} a real difference may not pay for it"
           if events is not None and events < 200 else "")
    one_condition = (model.get("hyperparameters") or {}).get("max_conditions") == 1
    broader = names['support'] if one_condition else f"{names['conditions']}, {names['support']}"
    return ("No rule beats the overall risk at these settings: either no subgroup is at a different risk, or the "
            f"data are too few to show one. Each rule must earn its prior cost{cost}{few}. Try fewer, broader "
            f"candidates ({broader}), or, for a small subgroup, {names['lower']}.")


#: Column names that say a patient characteristic a card should use only when it is clinically justified.
SENSITIVE_NAME = re.compile(
    r"(^|[^a-z])(race|ethnic|ethnicity|religion|nationality|citizenship|language|insurance|payer)([^a-z]|$)"
    # run together (raceth, race_ethnicity, RaceEthnicity, ethnicgroup), and a race as the whole name (a 0/1 column
    # ``black``, as in Ecdat's DoctorContacts; not white_cell_count)
    r"|^(race|ethnic|racial)|^(m|f|mother_?|father_?|pt_?|patient_?)race|^(is_?)?(black|white|hispanic|hisp|latino|"
    r"latina|latinx|asian|caucasian|african_?american|afam|nonwhite|non_?white|non_?hispanic(_?(white|black))?|"
    r"afro_?american|minority)(_?(male|female|man|woman|men|women))?$",
    re.IGNORECASE)


def sensitive_columns_note(model: dict, interface: str = "cli") -> str | None:
    """A note when the list's rules use a column such as race or ethnicity, else None.

    Such a condition can be a proxy for access to care rather than a cause of risk, and a card that
    ranks patients by it needs a clinical reason; the note names the columns and how to leave them out.
    """
    used = sorted({c["column"] for rule in model.get("rules", []) for c in rule.get("conditions", [])
                   if SENSITIVE_NAME.search(str(c["column"]))})
    if not used:
        return None
    them = "it" if len(used) == 1 else "them"
    how = ("refit with " + " ".join(f"--exclude {shlex.quote(name)}" for name in used) if interface == "cli"
           else f"untick {them} on the Data page and fit again")
    shown = ", ".join(f"'{name}'" for name in used)
    return (f"The list uses {shown}: a patient characteristic that can stand for access to care rather than "
            f"risk. Keep {them} only with a clinical reason; to leave {them} out, {how}.")


#: A training AUROC of the list at least this high is reported as a possible leak of the outcome (UCI
#: breast cancer, separable by cell shape alone, reaches 0.993; a copy of the outcome reaches 1).
LEAK_AUROC = 0.997


def _grouped_auroc(rules: list[dict], default: dict) -> float | None:
    """The AUROC of a list on its own training data, from each rule's risk, patients and events
    (scikit-learn's, with each rule's events and non-events as weights)."""
    from sklearn.metrics import roc_auc_score

    risk = [r["probability"] for r in (*rules, default)]
    events = [r["n_positive"] for r in (*rules, default)]
    others = [r["support"] - r["n_positive"] for r in (*rules, default)]
    if not sum(events) or not sum(others):
        return None
    return float(roc_auc_score([1] * len(risk) + [0] * len(risk), risk + risk, sample_weight=events + others))


def _shares_a_stem(column: str, target: str, length: int = 5) -> bool:
    """Whether a column's name starts like the outcome's (``readmission_flag`` and ``readmitted``)."""
    a, b = str(column).lower(), str(target).lower()
    common = 0
    for x, y in zip(a, b):
        if x != y:
            break
        common += 1
    return common >= min(length, len(b)) and len(b) >= 3


#: Fewer patients than this on either side of the outcome (with the event, or without it) and a card's risks rest on
#: too few to mean much: the usual minimum of about 10 events per thing a model estimates (Peduzzi et al. 1996),
#: where a rule list estimates at least one risk.
FEW_PATIENTS = 10


def few_patients_note(model: dict) -> str | None:
    """A warning when the training data hold fewer than :data:`FEW_PATIENTS` patients with the event or without it,
    else None.

    The model is still the paper's posterior and its MAP list, but with so few patients that list mostly reflects the
    prior (eq. pc and the risks' Gamma priors), and every risk on it is an estimate from a handful of patients.
    """
    training = model.get("training") or {}
    n_rows, events = training.get("n_rows"), training.get("n_positive")
    if not isinstance(n_rows, int) or not isinstance(events, int):
        return None
    return few_patients_text(n_rows, events)


def few_patients_text(n_rows: int, events: int) -> str | None:
    """:func:`few_patients_note` from the counts: ``n_rows`` patients, ``events`` of them with the event."""
    side, count = min(("with the event", events), ("without the event", n_rows - events), key=lambda pair: pair[1])
    if count >= FEW_PATIENTS:
        return None
    patients = "patient" if n_rows == 1 else "patients"
    return (f"Only {n_rows:,} {patients}, {count:,} of them {side}: too few to fit a list that means much for new "
            f"patients (at least {FEW_PATIENTS} with the event and {FEW_PATIENTS} without are usually needed). Treat "
            "these risks as a description of these patients only, and fit again on more.")


def leakage_note(model: dict, interface: str = "cli") -> str | None:
    """A note when the list separates the outcome almost perfectly, a condition of it alone nearly is the outcome
    (``training.outcome_proxies``: :func:`frl_engine.estimator.outcome_proxies`), or a rule column is named like the
    outcome.

    On real exports that is usually a column recorded after the outcome or derived from it
    (``readmission_flag`` next to ``readmitted``, a discharge disposition next to death), and the
    list would be useless on new patients.  The note names the columns to check and how to leave
    them out; it never drops them itself.
    """
    rules, default = model.get("rules", []), model.get("default")
    if not rules or not default:
        return None
    target = (model.get("outcome") or {}).get("target") or ""
    used = list(dict.fromkeys(c["column"] for r in rules for c in r.get("conditions", [])))
    named = [c for c in used if target and _shares_a_stem(c, target)]
    proxies = [p for p in (model.get("training") or {}).get("outcome_proxies") or []
               if isinstance(p, dict) and p.get("column") in used]
    auroc = _grouped_auroc(rules, default)
    pure = [c["column"] for r in rules if r["support"] >= 10 and r["n_positive"] in (0, r["support"])
            for c in r.get("conditions", [])]
    separates = auroc is not None and auroc >= LEAK_AUROC
    if not separates and not named and not proxies:
        return None
    suspects = list(dict.fromkeys([p["column"] for p in proxies] + named
                                  + (pure or [c["column"] for c in rules[0].get("conditions", [])]
                                     if separates else [])))
    shown = ", ".join(f"'{c}'" for c in suspects)
    them = "it" if len(suspects) == 1 else "them"
    if interface == "cli":
        how = "refit with " + " ".join(f"--exclude {shlex.quote(c)}" for c in suspects)
    elif interface == "api":
        how = f"refit with exclude={suspects!r} (or without {them} in X)"
    else:
        how = f"untick {them} on the Data page and fit again"
    if separates:
        why = f"The list separates the outcome almost perfectly on its training data (AUROC {auroc:.3f})"
    elif proxies:
        why = (f"'{proxies[0]['condition']}' alone tells the outcome almost perfectly on the training data "
               f"(sensitivity + specificity - 1 = {proxies[0]['youden']:.2f})")
    else:
        why = f"The list uses {shown}, named like the outcome '{target}'"
    return (f"{why}: check that {shown} {'is' if len(suspects) == 1 else 'are'} not recorded after the outcome "
            f"or copied from it, or the list will fail on new patients. To leave {them} out, {how}.")


def copied_note(copies) -> str | None:
    """The line naming the columns in no candidate rule because each of their values holds the same patients as a
    value of another column (``sex`` F / M beside ``gender``), which the rules use instead; None when there are none.
    Said apart from :func:`ruleless_note`, whose advice (a lower support) would not help them."""
    if not copies:
        return None
    shown = ", ".join(f"'{column}' (the same as '{other}')" for column, other in copies.items())
    return (f"In no candidate rule, as each of their values holds the same patients as a value of another column, "
            f"whose rules stand for them: {shown}. A copy or a recoding of that column; nothing is lost.")
