"""The purchase mix's no-wait commitments for one GPU type, as it buys them (its terms and
payments, not the sweep's pool price), and the words that reconcile its own replay of each
with the sweep's. No ORM here: services pass the analysis document in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from planner.capacity.core.frontier import NoWaitReference
from planner.core import formatting as fmt

WHAT_TO_BUY = "what to buy now"
HINDSIGHT = "no-wait hindsight optimum"
# Totals within this share of each other are the same answer (float sums over thousands of hours).
SAME_REL = 1e-6


def _mix_plan(replay: Mapping[str, Any] | None, gpu_type: str) -> dict[str, Any]:
    for plan in (replay or {}).get("plans") or []:
        if (plan.get("offer") or {}).get("gpu_type") == gpu_type:
            return dict(plan)
    return {}


def payment_words(payment_option: str | None, offering_class: str | None) -> str:
    """"All upfront, standard": a commitment's payment option and offering class."""
    return ", ".join(filter(None, (fmt.label(payment_option) if payment_option else "",
                                   offering_class or "")))


def _part_words(instances: int, instance_type: str, term: str, payment: str) -> str:
    """"2 x p4de.24xlarge on Reserved 3 years, All upfront, standard"."""
    return f"{instances:,} x {instance_type} on {fmt.label(term)}" + (
        f", {payment}" if payment else "")


def _purchase(name: str, parts: Sequence[tuple[int, int, float, str]],
              plan: Mapping[str, Any], hours: float | None) -> dict[str, Any]:
    """parts: (instances, GPUs, USD per hour of them all, words) per commitment bought."""
    expected = plan.get("expected") or {}
    total = expected.get("cost_usd")
    return {
        "name": name, "gpus": int(sum(p[1] for p in parts)),
        "usd_per_hour": float(sum(p[2] for p in parts)),
        "bought_as": " and ".join(p[3] for p in parts) or "nothing committed",
        "purchase_mix_total_usd": None if total is None else float(total),
        "purchase_mix_pool_gpu_hours": expected.get("committed_gpu_hours_used"),
        "is_purchase_mix_spot": bool((plan.get("decision") or {}).get("is_spot")),
        "purchase_mix_hours": hours,
    }


def _what_to_buy(document: Mapping[str, Any], gpu_type: str) -> dict[str, Any]:
    buy = document.get("what_to_buy") or {}
    item = next((dict(t) for t in buy.get("types") or [] if t.get("gpu_type") == gpu_type), {})
    parts = [(int(line["count"]), int(line["gpus"]), float(line["usd_per_hour"]),
              _part_words(int(line["count"]), line["instance_type"], line["term"],
                          payment_words(line.get("payment_option"),
                                         line.get("offering_class"))))
             for line in item.get("lines") or [] if int(line.get("count") or 0) > 0]
    replay = buy.get("replay") or {}
    return _purchase(WHAT_TO_BUY, parts, _mix_plan(replay, gpu_type), replay.get("n_hours"))


def _hindsight(document: Mapping[str, Any], gpu_type: str) -> dict[str, Any] | None:
    reference = document.get("hindsight_reference") or {}
    plan = _mix_plan(reference, gpu_type)
    if not plan:
        return None
    offer = plan.get("offer") or {}
    options = offer.get("commitments") or []
    parts = []
    for index, bought in enumerate(plan.get("commitments") or []):
        instances = int(bought.get("instances") or 0)
        if instances <= 0:
            continue
        option = options[index] if index < len(options) else {}
        parts.append((instances, int(bought.get("gpus") or 0),
                      float(bought.get("hourly_commitment_usd") or 0.0),
                      _part_words(instances, offer.get("instance_type", ""), bought["term"],
                                  payment_words(option.get("payment_option"),
                                                 option.get("offering_class")))))
    return _purchase(HINDSIGHT, parts, plan, reference.get("n_hours"))


def no_wait_purchases(document: Mapping[str, Any], gpu_type: str) -> list[dict[str, Any]]:
    """The purchase mix's no-wait commitments for the type: what it says to buy now (its one
    recommendation, risk-sized) and its hindsight optimum on this history, each with its GPUs,
    `usd_per_hour` (all of them, effective: upfront amortised), `bought_as` (words) and the
    purchase mix's own replay of it (`purchase_mix_total_usd`, hour by hour)."""
    found = [_what_to_buy(document, gpu_type)]
    hindsight = _hindsight(document, gpu_type)
    return found + ([hindsight] if hindsight else [])


def references(purchases: Sequence[Mapping[str, Any]]) -> tuple[NoWaitReference, ...]:
    """The purchases as the frontier compares them: each at its own pool price."""
    return tuple(NoWaitReference(p["name"], int(p["gpus"]), float(p["usd_per_hour"]))
                 for p in purchases)


def _differences(purchase: Mapping[str, Any], reference: Mapping[str, Any],
                 is_spot_allowed: bool, burst_words: str = "") -> list[str]:
    """Why the purchase mix's replay of a purchase differs from the sweep's, each reason
    only when it applies."""
    reasons = [burst_words] if burst_words else []
    is_mix_spot = bool(purchase.get("is_purchase_mix_spot"))
    if is_mix_spot and not is_spot_allowed:
        reasons.append("the purchase mix runs interruptible jobs on spot, this sweep bursts "
                       "them on demand (allow “Interruptible jobs burst to spot” to compare "
                       "like for like)")
    elif is_spot_allowed and not is_mix_spot:
        reasons.append("the purchase mix runs interruptible jobs on demand, this sweep "
                       "bursts them to spot")
    hours, span = purchase.get("purchase_mix_hours"), float(reference.get("span_hours") or 0)
    if hours and span and abs(float(hours) - span) > 0.01 * span:
        reasons.append(f"the purchase mix replays its look-back window ({fmt.count(hours)} h), "
                       f"this sweep the history's span ({fmt.count(span)} h)")
    used = purchase.get("purchase_mix_pool_gpu_hours")
    pooled = float(reference.get("pool_gpu_hours") or 0)
    if used is not None and abs(float(used) - pooled) > max(1.0, 0.005 * pooled):
        reasons.append(
            f"the purchase mix fills the commitment hour by hour ({fmt.count(used)} GPU-hours "
            f"on it: a job may be split between the commitment and the cloud"
            + (", interruptible jobs never use it" if is_mix_spot else "")
            + f"), this sweep runs each job whole on the pool or bursts it whole "
              f"({fmt.count(pooled)} GPU-hours on the pool)")
    return reasons


def reference_note(purchase: Mapping[str, Any], reference: Mapping[str, Any], *,
                   is_spot_allowed: bool, burst_words: str = "") -> str:
    """One sentence per no-wait commitment: how it is bought and priced here, and the
    purchase mix's own figure for it with why the two differ (or that they agree).
    `reference` is its replayed point (PointFigures as a dict)."""
    name, total = purchase["name"], float(reference["total_usd"])
    if not purchase["gpus"]:
        head = f"“{name}” commits nothing for this type: every job runs in the cloud"
    else:
        head = (f"“{name}” is priced as the purchase mix buys it "
                f"({fmt.usd(purchase['usd_per_hour'])}/hour, "
                f"{fmt.usd(float(reference['pool_usd']))} over the history)")
    mix = purchase.get("purchase_mix_total_usd")
    if mix is None:
        return head + "."
    if abs(total - mix) <= max(1.0, SAME_REL * abs(mix)):
        return head + f"; the purchase mix's replay of it gives the same {fmt.usd(total)}."
    reasons = _differences(purchase, reference, is_spot_allowed, burst_words)
    why = "; ".join(reasons) or "the purchase mix replays demand hour by hour, this sweep " \
                                "job by job"
    return (head + f". The purchase mix's replay of it is {fmt.usd(mix)}, here "
            f"{fmt.usd(total)}: {why}.")
