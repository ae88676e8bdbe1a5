// Region lists follow their provider: a <select data-follows="id_provider"> keeps only the
// chosen provider's group of regions (all groups when no provider is chosen).
(function () {
  "use strict";
  Array.prototype.forEach.call(document.querySelectorAll("select[data-follows]"), function (region) {
    var provider = document.getElementById(region.getAttribute("data-follows"));
    if (!provider) return;
    var first = region.options.length && region.options[0].value === "" ? region.options[0].cloneNode(true) : null;
    var groups = {};
    var order = [];
    Array.prototype.forEach.call(region.querySelectorAll("optgroup"), function (group) {
      groups[group.label] = group.cloneNode(true);
      order.push(group.label);
    });
    if (!order.length) return;  // the server already scoped the list to one provider

    function fill() {
      var keep = region.value;
      var chosen = provider.value;
      var label = provider.options[provider.selectedIndex] ? provider.options[provider.selectedIndex].text : "";
      region.innerHTML = "";
      if (first) region.appendChild(first.cloneNode(true));
      order.forEach(function (name) {
        if (!chosen) { region.appendChild(groups[name].cloneNode(true)); return; }
        if (name !== chosen && name !== label) return;
        Array.prototype.forEach.call(groups[name].children, function (o) { region.appendChild(o.cloneNode(true)); });
      });
      region.value = keep;
      if (region.value !== keep) region.value = "";  // the old region is not this provider's
    }

    provider.addEventListener("change", fill);
    if (provider.value) fill();
  });
})();
