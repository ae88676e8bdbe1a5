"""Form widgets for long option lists.

Django renders every <option> of a Select through its own template (and format_html through
lazy-string wrappers): a region list of every provider (about 220 options in groups) cost a
page 10 ms or more. `LongSelect` writes the same HTML in plain Python, every value, label and
attribute escaped by `html.escape`.
"""

from __future__ import annotations

from html import escape
from typing import Any

from django import forms
from django.utils.safestring import SafeString, mark_safe


def _attributes(attrs: dict[str, Any]) -> str:
    """` key="value"` pairs as Django's flatatt writes them (True: the bare key; False and
    None: left out)."""
    parts = []
    for key, value in attrs.items():
        if value is True:
            parts.append(f" {escape(str(key))}")
        elif value is not False and value is not None:
            parts.append(f' {escape(str(key))}="{escape(str(value))}"')
    return "".join(parts)


def _option(option: dict[str, Any]) -> str:
    return (f'<option value="{escape(str(option["value"]))}"{_attributes(option["attrs"])}>'
            f'{escape(str(option["label"]))}</option>')


class LongSelect(forms.Select):
    """A Select (with optgroups) rendered without a template per option."""

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None,
               renderer: Any = None) -> SafeString:
        widget = self.get_context(name, value, attrs)["widget"]
        parts = [f'<select name="{escape(str(widget["name"]))}"{_attributes(widget["attrs"])}>']
        for group, options, _index in widget["optgroups"]:
            if group:
                parts.append(f'<optgroup label="{escape(str(group))}">')
            parts.extend(_option(option) for option in options)
            if group:
                parts.append("</optgroup>")
        parts.append("</select>")
        # Every name, value, label and attribute above went through html.escape.
        return mark_safe("".join(parts))  # nosec B308 B703
