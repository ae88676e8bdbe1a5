"""THE purchase-option and payment-option tables: every way to buy GPU time, once.

Django-free. The price model's choices (pricing.models), the importers' allowed codes
(pricing.importers.common), the plan's commitment floor (plans.core.costs), labels and plain
words (planner.core.formatting), chart colours and the plan form all derive from
PURCHASE_OPTIONS; `tests/test_vocabulary.py` fails when a code is written out anywhere else.
Adding an option is one entry here (plus the choices migration and, if a file lists it, the
importer that reads it).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.core.cloud import HOURS_PER_YEAR

# hourly: billed per instance-hour as used; instance_commitment: a reservation or committed
# use of one instance type for a term; savings_plan: USD per hour committed across types;
# block: capacity booked for a fixed block of hours (not bought by the purchase mix).
FAMILIES = ("hourly", "instance_commitment", "savings_plan", "block")


@dataclass(frozen=True)
class PurchaseOptionSpec:
    """One purchase option.

    `label` is its name in tables and forms ("Reserved 1 year"), `words` the phrase in
    sentences ("1-year reservation"). `term_hours` is the span a purchase pays for whole
    (0 = pay as you go): a single run is billed max(run hours, term × (1 - reuse)).
    `colour` marks it on charts. `is_commitment`: bought ahead for a term (rather than by the
    hour as used). `family` (FAMILIES) says how the purchase mix can buy it.
    """

    code: str
    label: str
    words: str
    term_hours: float
    colour: str
    family: str

    def __post_init__(self) -> None:
        if self.term_hours < 0:
            raise ValueError(f"{self.code}: term_hours must be >= 0")
        if self.family not in FAMILIES:
            raise ValueError(f"{self.code}: unknown family {self.family!r}")

    @property
    def term_years(self) -> float:
        return self.term_hours / HOURS_PER_YEAR

    @property
    def is_commitment(self) -> bool:
        return self.term_hours > 0


def _option(code: str, label: str, words: str, colour: str, family: str, *,
            years: float = 0.0, hours: float = 0.0) -> PurchaseOptionSpec:
    """A table row whose term is given in years or in hours."""
    return PurchaseOptionSpec(code, label, words, years * HOURS_PER_YEAR + hours, colour, family)


_RESERVE, _SAVE = "instance_commitment", "savings_plan"
ON_DEMAND, SPOT = "on_demand", "spot"
RESERVED_1Y, RESERVED_3Y = "reserved_1y", "reserved_3y"
COMMITTED_1Y, COMMITTED_3Y = "committed_1y", "committed_3y"
SAVINGS_PLAN_1Y, SAVINGS_PLAN_3Y = "savings_plan_1y", "savings_plan_3y"
PURCHASE_OPTIONS: tuple[PurchaseOptionSpec, ...] = (
    _option(ON_DEMAND, "On-demand", "on-demand", "#3465a4", "hourly"),
    _option(SPOT, "Spot / preemptible", "spot", "#e07b00", "hourly"),
    _option(RESERVED_1Y, "Reserved 1 year", "1-year reservation", "#4e9a06", _RESERVE,
            years=1),
    _option(RESERVED_3Y, "Reserved 3 years", "3-year reservation", "#2e6a00", _RESERVE,
            years=3),
    _option(COMMITTED_1Y, "Committed use 1 year", "1-year committed use", "#4e9a06",
            _RESERVE, years=1),
    _option(COMMITTED_3Y, "Committed use 3 years", "3-year committed use", "#2e6a00",
            _RESERVE, years=3),
    _option(SAVINGS_PLAN_1Y, "Savings plan 1 year", "1-year savings plan", "#75507b", _SAVE,
            years=1),
    _option(SAVINGS_PLAN_3Y, "Savings plan 3 years", "3-year savings plan", "#5c3566", _SAVE,
            years=3),
)
# The code of each family's term in whole years (what providers' files name by term).
RESERVED_BY_YEARS: dict[int, str] = {1: RESERVED_1Y, 3: RESERVED_3Y}
COMMITTED_BY_YEARS: dict[int, str] = {1: COMMITTED_1Y, 3: COMMITTED_3Y}
SAVINGS_PLAN_BY_YEARS: dict[int, str] = {1: SAVINGS_PLAN_1Y, 3: SAVINGS_PLAN_3Y}
OPTIONS_BY_CODE: dict[str, PurchaseOptionSpec] = {o.code: o for o in PURCHASE_OPTIONS}
PURCHASE_OPTION_CODES: tuple[str, ...] = tuple(OPTIONS_BY_CODE)
# Hourly options priced per instance-hour as used; a plan offers these when none are chosen.
PAY_AS_YOU_GO: tuple[str, ...] = tuple(o.code for o in PURCHASE_OPTIONS if o.family == "hourly")
# Families the purchase mix buys: reservations and committed use (per instance type) and
# savings plans (a dollar commitment across types), each code with its term in years.
RESERVATIONS: dict[str, float] = {
    o.code: o.term_years for o in PURCHASE_OPTIONS if o.family == _RESERVE}
SAVINGS_PLANS: dict[str, float] = {
    o.code: o.term_years for o in PURCHASE_OPTIONS if o.family == _SAVE}

PURCHASE_TERM_YEARS: dict[str, float] = {o.code: o.term_years for o in PURCHASE_OPTIONS}
PURCHASE_TERM_HOURS: dict[str, float] = {o.code: o.term_hours for o in PURCHASE_OPTIONS}
PURCHASE_OPTION_WORDS: dict[str, str] = {o.code: o.words for o in PURCHASE_OPTIONS}
PURCHASE_OPTION_LABELS: dict[str, str] = {o.code: o.label for o in PURCHASE_OPTIONS}
PURCHASE_OPTION_COLOURS: dict[str, str] = {o.code: o.colour for o in PURCHASE_OPTIONS}


@dataclass(frozen=True)
class PaymentOptionSpec:
    """How a commitment is paid; code "" where a provider offers one way (on-demand, spot,
    GCP CUDs and Azure savings plans are billed hourly or monthly)."""

    code: str
    label: str
    words: str


NO_UPFRONT, PARTIAL_UPFRONT, ALL_UPFRONT = "no_upfront", "partial_upfront", "all_upfront"
PAYMENT_OPTIONS: tuple[PaymentOptionSpec, ...] = (
    PaymentOptionSpec("", "Pay as you go / monthly", "no upfront"),
    PaymentOptionSpec(NO_UPFRONT, "No upfront", "no upfront"),
    PaymentOptionSpec(PARTIAL_UPFRONT, "Partial upfront", "partial upfront"),
    PaymentOptionSpec(ALL_UPFRONT, "All upfront", "all upfront"),
)
PAYMENT_OPTION_CODES: tuple[str, ...] = tuple(p.code for p in PAYMENT_OPTIONS)
PAYMENT_OPTION_WORDS: dict[str, str] = {p.code: p.words for p in PAYMENT_OPTIONS}
# The payment choices of a commitment (the blank "pay as you go" is not one).
COMMITMENT_PAYMENTS: tuple[tuple[str, str], ...] = tuple(
    (p.code, p.label) for p in PAYMENT_OPTIONS if p.code)
