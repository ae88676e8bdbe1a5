"""The paragraphs of a rendered page and the quantities one of them prints twice with two
roundings ("$755,639" and "$755,638"): issue 38's "one figure per quantity per paragraph"."""

import re
from html.parser import HTMLParser

BLOCKS = {"p", "li", "dd", "dt", "td", "th", "figcaption", "caption", "h1", "h2", "h3", "summary"}
SKIPPED = {"script", "style"}
MONEY = re.compile(r"\$(\d[\d,]*(?:\.\d+)?)")
# value, unit; the tolerance under which two different printed values are one quantity
# rounded twice (a day's tenth, a kg, a dollar...).
UNITS = {"days": 0.1, "kg": 1.0, "kWh": 1.0, "%": 0.1, "h": 0.1, "TB-months": 0.01,
         "GB": 0.01}
QUANTITY = re.compile(r"(\d[\d,]*(?:\.\d+)?) ?(days|kg|kWh|%|h|TB-months|GB)\b")


class _Paragraphs(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[list[str]] = []
        self.skip = 0
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self.skip += 1
        elif tag in BLOCKS:
            self.stack.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self.skip -= 1
        elif tag in BLOCKS and self.stack:
            text = " ".join("".join(self.stack.pop()).split())
            if text:
                self.found.append(text)

    def handle_data(self, data: str) -> None:
        if self.stack and not self.skip:
            self.stack[-1].append(data)


def paragraphs(page: str) -> list[str]:
    """The text of every block (p, li, td...) of a page, its nested blocks apart."""
    parser = _Paragraphs()
    parser.feed(page)
    return parser.found


def _near(values: list[float], tolerance: float) -> list[tuple[float, float]]:
    ordered = sorted(set(values))
    return [(a, b) for a, b in zip(ordered, ordered[1:], strict=False)
            if b - a <= tolerance + 1e-9]


def twice_rounded(text: str) -> list[str]:
    """Pairs of figures of one unit in `text` that differ by no more than one rounding step:
    one quantity printed twice with two roundings."""
    found = [f"${a:,.0f} and ${b:,.0f}" for a, b in
             _near([float(m.replace(",", "")) for m in MONEY.findall(text)], 1.0) if a >= 1000]
    by_unit: dict[str, list[float]] = {}
    for value, unit in QUANTITY.findall(text):
        by_unit.setdefault(unit, []).append(float(value.replace(",", "")))
    for unit, values in by_unit.items():
        found += [f"{a:g} {unit} and {b:g} {unit}" for a, b in _near(values, UNITS[unit])
                  if a >= 10 and b >= 10]
    return found
