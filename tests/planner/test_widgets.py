"""LongSelect writes what Django's Select writes, escaped the same way."""

from html.parser import HTMLParser

from django import forms

from planner.widgets import LongSelect

HOSTILE = '"><script>alert(1)</script>&amp;'
CHOICES = [("", "any region"),
           ("aws", [("us-east-1", "us-east-1"), (HOSTILE, f"label {HOSTILE}")]),
           (f"group {HOSTILE}", [("a&b", "a & b")])]


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, object]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.events.append((tag, sorted(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self.events.append(("/" + tag, None))

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.events.append(("text", data.strip()))


def _parsed(html: str) -> list[tuple[str, object]]:
    tree = _Tree()
    tree.feed(html)
    return tree.events


def test_long_select_renders_the_same_elements_as_django_with_hostile_values() -> None:
    class Form(forms.Form):
        django = forms.ChoiceField(choices=CHOICES, required=False,
                                   widget=forms.Select(attrs={"data-follows": "id_p"}))
        fast = forms.ChoiceField(choices=CHOICES, required=False,
                                 widget=LongSelect(attrs={"data-follows": "id_p"}))

    form = Form(initial={"django": HOSTILE, "fast": HOSTILE})
    django = str(form["django"]).replace('"id_django"', '"id_fast"').replace(
        'name="django"', 'name="fast"')
    assert _parsed(str(form["fast"])) == _parsed(django)
    assert "<script>" not in str(form["fast"])
    selected = [attrs for tag, attrs in _parsed(str(form["fast"]))
                if tag == "option" and ("selected", None) in attrs]
    assert selected == [[("selected", None), ("value", HOSTILE)]]
