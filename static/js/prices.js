// Price filters: the region list follows the chosen provider (its regions only).
(function () {
  "use strict";
  var data = document.getElementById("regions-by-provider");
  var provider = document.getElementById("id_provider");
  var region = document.getElementById("id_region");
  if (!data || !provider || !region) return;
  var regions = JSON.parse(data.textContent);
  var providerNames = {};
  Array.prototype.forEach.call(provider.options, function (o) { providerNames[o.value] = o.text; });

  function option(code) {
    var o = document.createElement("option");
    o.value = code; o.textContent = code;
    return o;
  }

  function fill() {
    var keep = region.value;
    var chosen = provider.value;
    region.innerHTML = "";
    var any = document.createElement("option");
    any.value = ""; any.textContent = "Any";
    region.appendChild(any);
    var slugs = chosen ? [chosen] : Object.keys(regions).sort(function (a, b) {
      return (providerNames[a] || a).localeCompare(providerNames[b] || b);
    });
    slugs.forEach(function (slug) {
      var parent = region;
      if (!chosen) {
        parent = document.createElement("optgroup");
        parent.label = providerNames[slug] || slug;
        region.appendChild(parent);
      }
      (regions[slug] || []).forEach(function (code) { parent.appendChild(option(code)); });
    });
    region.value = keep;
    if (region.value !== keep) region.value = "";  // the old region is not this provider's
  }

  provider.addEventListener("change", fill);
})();

// Column picker: a ticked or unticked box applies at once (the form works without JavaScript).
(function () {
  "use strict";
  var form = document.getElementById("price-columns-form");
  if (!form) return;
  form.addEventListener("change", function () { form.submit(); });
})();
