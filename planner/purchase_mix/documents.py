"""The document of a history's analysis: analysis, prices, what to buy (THE recommendation,
with its replay on the history), the hindsight reference, look-back sensitivity and the
backtest: what the page, the charts, the reports, the API and the CLI show.

Called by services; calls the cores and the offers service.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.core.cloud import GPU_SERVICE_YEARS_LEFT
from planner.core.purchase_options import ON_DEMAND, SPOT
from planner.core.serialize import frame_to_dict, json_safe
from planner.purchase_mix import offers as offer_service
from planner.purchase_mix import selectors
from planner.purchase_mix.carbon import history_carbon_document
from planner.purchase_mix.core.analysis import DemandAnalysis, analyze_demand, duration_hours
from planner.purchase_mix.core.backtest import SizingRule, lookback_sensitivity
from planner.purchase_mix.core.backtest_terms import backtest_terms
from planner.purchase_mix.core.breakdown import duration_histogram
from planner.purchase_mix.core.buy import WhatToBuy, buy_decision, what_to_buy
from planner.purchase_mix.core.demand import HourlyDemand
from planner.purchase_mix.core.forecast import MIN_DAYS_FOR_3_YEARS, MIN_DAYS_FOR_COMMITMENT
from planner.purchase_mix.core.hindsight import hindsight_replay
from planner.purchase_mix.core.offers import GpuOffer
from planner.purchase_mix.core.replay import MixReplay, replay_mix
from planner.purchase_mix.core.risk import DEFAULT_SCENARIOS, RiskSettings
from planner.purchase_mix.core.upload.jobs import JobHistory, UploadSettingError, UsageHistory
from planner.purchase_mix.core.upload.settings import SETTINGS_BY_NAME
from planner.purchase_mix.models import History

TREND_HORIZON_DAYS = 365


# Each scenario is a full risk sizing (2,000 of them took a worker 140 s instead of 0.6 s).
MAX_GROWTH_SCENARIOS = 10


def parse_growth(text: str) -> tuple[float, ...]:
    """`-50,-25,0,25` (% per year) -> fractions; each must be above -100 % and at most +500 %,
    at most MAX_GROWTH_SCENARIOS of them."""
    items = list(filter(None, (part.strip().rstrip("%") for part in text.split(","))))
    if len(items) > MAX_GROWTH_SCENARIOS:
        raise ValueError(f"give at most {MAX_GROWTH_SCENARIOS} growth scenarios "
                         f"({len(items)} given)")
    values = []
    for item in items:
        try:
            value = float(item)
        except ValueError as error:
            raise ValueError(f"growth scenario {item!r} is not a number (% per year)") from error
        if not -100 < value <= 500:
            raise ValueError(f"growth scenario {value:g}% per year is outside (-100%, +500%]")
        values.append(value / 100.0)
    if not values:
        raise ValueError("give at least one growth scenario (% per year)")
    return tuple(values)


@dataclass(frozen=True)
class RunOptions:
    """Where to buy and how to read spot risk; blanks mean cheapest offered / any region."""

    provider: str = ""
    region: str = ""
    lookback_days: int | None = None
    spot_bands: Mapping[str, str] = field(default_factory=dict)
    accelerator_map: Mapping[str, str] = field(default_factory=dict)
    growth_scenarios: tuple[float, ...] = ()
    is_spot_alternative: bool = False
    is_elsewhere_alternative: bool = False

    @property
    def risk_settings(self) -> RiskSettings:
        return RiskSettings(growth_scenarios_per_year=self.growth_scenarios or DEFAULT_SCENARIOS)


def run_options_check(options: RunOptions) -> None:
    """ValueError naming the field when the provider or region sells nothing here (the
    form's choices refuse them; the API and the command line would analyse at $0)."""
    places = selectors.region_choices()
    providers = sorted({slug for slug, _ in places})
    if options.provider and options.provider not in providers:
        raise ValueError(f"provider: {options.provider!r} has no current prices (choose one "
                         f"of {', '.join(providers)}, or leave it blank)")
    regions = {code for slug, code in places if options.provider in ("", slug)}
    if options.region and options.region not in regions:
        raise ValueError(f"region: {options.region!r} is not a region of "
                         f"{options.provider or 'any provider'} with prices")
    if options.lookback_days is not None and options.lookback_days < 1:
        raise ValueError(f"lookback_days: {options.lookback_days} is not a number of days "
                         "from 1")


def upload_texts_check(*, default_gpu_type: str, origin: str) -> None:
    """UploadSettingError when a text setting cannot be stored as the history's column
    (PostgreSQL refuses NUL and anything over the column's length: a 500, not a message)."""
    for name, form_name, value in (("gpu_type", "default_gpu_type", default_gpu_type),
                                   ("origin", "origin", origin)):
        limit = History._meta.get_field(form_name).max_length or 0
        if len(value) > limit or "\x00" in value:
            raise UploadSettingError(
                f"{SETTINGS_BY_NAME[name].label}: at most {limit} characters, none of them NUL "
                f"({len(value):,} given)", setting=form_name)


def _sizes(analysis: DemandAnalysis) -> list[offer_service.GpuDemandSize]:
    return [
        offer_service.GpuDemandSize(name, analysis.stats[name].p90_gpus)
        for name in analysis.demand.gpu_types
    ]


def _analysis_dict(analysis: DemandAnalysis, history: JobHistory | UsageHistory) -> dict[str, Any]:
    result = analysis.to_dict()
    result.pop("demand", None)
    result["duration_histogram"] = None
    if analysis.durations is not None and isinstance(history, JobHistory):
        result["duration_histogram"] = duration_histogram(
            duration_hours(history.jobs),
            mu_log_hours=analysis.durations.mu_log_hours,
            sigma_log_hours=analysis.durations.sigma_log_hours,
        ).to_dict()
    return result


def window_days(demand: HourlyDemand, lookback_days: int | None) -> int | None:
    """The look-back what to buy is sized on; None = the whole history (also when the
    look-back covers it all)."""
    return lookback_days if lookback_days and lookback_days * 24 < demand.n_hours else None


def fit_window(demand: HourlyDemand, lookback_days: int | None) -> HourlyDemand:
    return demand.last_days(lookback_days) if lookback_days else demand


def _backtest_dict(
    demand: HourlyDemand, offers: list[GpuOffer], options: RunOptions
) -> dict[str, Any] | None:
    try:
        result = backtest_terms(
            demand, offers, settings=options.risk_settings,
            is_spot_allowed=options.is_spot_alternative,
            is_elsewhere_allowed=options.is_elsewhere_alternative,
        )
    except ValueError:
        return None
    return result.to_dict()


def service_years_left(accelerators: Mapping[str, str]) -> dict[str, float]:
    """GPU type -> years of cloud service left, from the catalog model (e.g. v100-... -> V100)."""
    found = {}
    for name, slug in accelerators.items():
        model = slug.split("-")[0].upper()
        if model in GPU_SERVICE_YEARS_LEFT:
            found[name] = GPU_SERVICE_YEARS_LEFT[model]
    return found


def _sizing_rule(offer_set: offer_service.OfferSet, options: RunOptions) -> SizingRule:
    return SizingRule(
        options.risk_settings, is_spot_allowed=options.is_spot_alternative,
        is_elsewhere_allowed=options.is_elsewhere_alternative,
        service_years_left=service_years_left(offer_set.accelerators),
    )


def _what_to_buy(
    demand: HourlyDemand, offer_set: offer_service.OfferSet, options: RunOptions
) -> WhatToBuy:
    rule = _sizing_rule(offer_set, options)
    return what_to_buy(
        demand, offer_set.offers, settings=rule.settings,
        is_spot_allowed=rule.is_spot_allowed, is_elsewhere_allowed=rule.is_elsewhere_allowed,
        service_years_left=rule.service_years_left, savings_plans=offer_set.savings_plans,
    )


HINDSIGHT_WORDS = ("What you would have bought knowing the future: the exact cost-minimising "
                   "commitment if the past repeated exactly, within the same buying rule as "
                   f"what to buy (nothing under {MIN_DAYS_FOR_COMMITMENT} days of history, no "
                   f"3-year term under {MIN_DAYS_FOR_3_YEARS}). A backtest reference, not a "
                   "recommendation.")


def _hindsight_dict(replay: MixReplay) -> dict[str, Any]:
    result = replay.to_dict()
    result.pop("demand", None)
    result.pop("savings_plans", None)  # the recommendation's replay carries them
    return {"words": HINDSIGHT_WORDS, **result}


def history_replay(buy: WhatToBuy, demand: HourlyDemand, offers: list[GpuOffer]) -> MixReplay:
    """The purchase replayed on the whole history: the recommendation's own replay unless it
    was sized on a shorter look-back window."""
    if buy.replay is not None and buy.replay.n_hours == demand.n_hours:
        return buy.replay
    return replay_mix(tuple(buy_decision(item) for item in buy.types), demand, offers)


def recommendation_document(
    history: JobHistory | UsageHistory,
    *,
    options: RunOptions,
    report: Callable[[int], None] = lambda pct: None,
) -> dict[str, Any]:
    """The analysis, the offers and prices used, the recommendation, look-back sensitivity
    and backtest, plus the hourly demand series: what the API, the page and the CLI show."""
    analysis = analyze_demand(history, horizon_days=TREND_HORIZON_DAYS)
    report(30)
    offer_set = offer_service.gpu_offers(
        sizes=_sizes(analysis),
        provider=options.provider,
        region=options.region,
        spot_bands=options.spot_bands,
        accelerator_map=options.accelerator_map,
    )
    report(45)
    demand = analysis.demand
    window = fit_window(demand, options.lookback_days)
    buy = _what_to_buy(window, offer_set, options)
    report(60)
    hindsight = hindsight_replay(window, offer_set.offers, is_gated=True)
    report(70)
    sensitivity = lookback_sensitivity(
        demand, offer_set.offers, rule=_sizing_rule(offer_set, options), recommended=buy,
        sized_on_days=window_days(demand, options.lookback_days))
    report(80)
    backtest = _backtest_dict(demand, offer_set.offers, options)
    report(95)
    return {
        "settings": {
            "provider": options.provider or None,
            "region": options.region or None,
            "lookback_days": options.lookback_days,
            "spot_bands": {
                offer.provider: selectors.spot_band_for(offer.provider, options.spot_bands)
                for offer in offer_set.offers
            },
            "accelerator_map": dict(options.accelerator_map),
            "growth_scenarios_per_year": list(options.risk_settings.growth_scenarios_per_year),
            "is_spot_alternative": options.is_spot_alternative,
            "is_elsewhere_alternative": options.is_elsewhere_alternative,
        },
        "hourly_demand": {
            "unit": "average concurrent GPUs per UTC hour",
            "firm": frame_to_dict(demand.firm_gpus),
            "interruptible": frame_to_dict(demand.interruptible_gpus),
        },
        "analysis": _analysis_dict(analysis, history),
        "accelerators": offer_set.accelerators,
        "unpriced": offer_set.unpriced,
        "prices": offer_set.prices,
        "offers": [json_safe(offer) for offer in offer_set.offers],
        "what_to_buy": buy.to_dict(),
        "hindsight_reference": _hindsight_dict(hindsight),
        "lookback_sensitivity": sensitivity.to_dict(),
        "backtest": backtest,
        "carbon": history_carbon_document(history, analysis, buy, offer_set.accelerators,
                                          history_replay(buy, demand, offer_set.offers)),
    }


def document_current(document: dict[str, Any] | None) -> dict[str, Any] | None:
    """A stored document as this code writes it. Documents written before each type's split
    of GPU-hours came from the replay carry the sizing's first-year forecast there (and a
    carbon burst scaled from it): their split is taken from their own replay, and, when the
    purchase was replayed on the whole history, the burst rows scaled to its on-demand
    GPU-hours (CO2e saved and cost change are linear in the burst)."""
    if document is None:
        return None
    document = _old_tables_said_so(document)
    buy = document.get("what_to_buy") or {}
    types = buy.get("types") or []
    if not types or all("demand_gpu_hours" in t for t in types):
        return document
    expected = {plan["offer"]["gpu_type"]: plan["expected"]
                for plan in (buy.get("replay") or {}).get("plans") or []}
    new_types = [_split_from(t, expected.get(t.get("gpu_type"))) for t in types]
    result = {**document, "what_to_buy": {**buy, "types": new_types}}
    if document.get("carbon") and not (document.get("settings") or {}).get("lookback_days"):
        result["carbon"] = _carbon_rescaled(document["carbon"], expected)
    return result


RECOMPUTE = "Stored before {what}: recompute the analysis to see {fix}."


def _old_tables_said_so(document: dict[str, Any]) -> dict[str, Any]:
    """Older look-back rows were the exact hindsight optimum per window, and the older backtest
    priced its hindsight row's whole-term cost on another purchase: said so, not shown as
    if they were today's tables."""
    result = document
    lookback = document.get("lookback_sensitivity") or {}
    rows = lookback.get("results") or []
    if rows and not any("words" in row for row in rows):
        result = {**result, "lookback_sensitivity": {**lookback, "note": RECOMPUTE.format(
            what="look-back windows were sized like what to buy (these rows are the exact "
                 "hindsight optimum on each window, not the recommendation's rule)",
            fix="them sized like what to buy")}}
    backtest = document.get("backtest") or {}
    strategies = backtest.get("strategies") or []
    if strategies and not any(s.get("name") == "hindsight_whole_term" for s in strategies):
        # The hindsight row's whole-term figures belong to another purchase than its own.
        fixed = [{**s, "whole_term_cost_usd": None, "whole_term_regret_usd": None}
                 if s.get("name") == "hindsight" else s for s in strategies]
        result = {**result, "backtest": {**backtest, "strategies": fixed, "note": RECOMPUTE.format(
            what="the whole-term optimum had its own row (whole-term regret is against a "
                 "purchase this table does not list)", fix="it")}}
    return result


def _split_from(item: dict[str, Any], outcome: dict[str, Any] | None) -> dict[str, Any]:
    if not outcome or not outcome.get("demand_gpu_hours"):
        return item
    total = float(outcome["demand_gpu_hours"])
    hours = {"committed": float(outcome["committed_gpu_hours_used"]),
             ON_DEMAND: float(outcome["on_demand_gpu_hours"]),
             SPOT: float(outcome["spot_gpu_hours"])}
    return {**item, "demand_gpu_hours": total,
            **{f"{k}_gpu_hours": v for k, v in hours.items()},
            **{f"{k}_share_pct": 100.0 * v / total for k, v in hours.items()}}


def _carbon_rescaled(carbon: dict[str, Any], expected: Mapping[str, Any]) -> dict[str, Any]:
    moves = []
    for move in carbon.get("burst") or []:
        outcome, old = expected.get(move.get("gpu_type")), move.get("burst_gpu_hours") or 0.0
        if not outcome or old <= 0:
            moves.append(move)
            continue
        ratio = float(outcome["on_demand_gpu_hours"]) / float(old)
        moves.append({**move, "burst_gpu_hours": float(outcome["on_demand_gpu_hours"]), **{
            key: move[key] * ratio for key in ("co2e_saved_kg", "cost_change_usd")
            if move.get(key) is not None}})
    totals = {**(carbon.get("totals") or {}),
              "co2e_saved_kg": sum(m.get("co2e_saved_kg") or 0.0 for m in moves),
              "cost_change_usd": sum(m.get("cost_change_usd") or 0.0 for m in moves)}
    return {**carbon, "burst": moves, "totals": totals}
