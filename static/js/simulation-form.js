// Simulation form: the instance list follows the chosen GPU (its instance types only, grouped
// by provider, cheapest first), and the line under it says the chosen one's price, region,
// basis, source and date. Without JavaScript "Show its instance types" asks the server.
(function () {
  "use strict";
  var data = document.getElementById("instance-choices");
  var gpu = document.getElementById("id_gpu");
  var instance = document.getElementById("id_instance_type");
  var note = document.getElementById("instance-note");
  if (!data || !gpu || !instance) return;
  var choices = JSON.parse(data.textContent);
  // The list follows the GPU at once, so the server round trip is not needed (and Enter in a
  // text box must submit the simulation, not this first submit button).
  var action = document.getElementById("show-instances-action");
  if (action) action.parentNode.removeChild(action);

  function option(value, text) {
    var o = document.createElement("option");
    o.value = value; o.textContent = text;
    return o;
  }

  function fill() {
    var keep = instance.value;
    var mine = choices.filter(function (c) { return c.gpu === gpu.value; });
    instance.innerHTML = "";
    instance.appendChild(option("", mine.length ? "choose an instance type" : "choose a GPU first"));
    var groups = {};
    mine.forEach(function (c) {  // already by provider, then price
      if (!groups[c.provider]) {
        groups[c.provider] = document.createElement("optgroup");
        groups[c.provider].label = c.provider;
        instance.appendChild(groups[c.provider]);
      }
      var o = option(String(c.id), c.label);
      o.setAttribute("data-note", c.note);
      groups[c.provider].appendChild(o);
    });
    instance.value = keep;
    if (instance.value !== keep) instance.value = "";  // the old one is another GPU's
    describe();
  }

  function describe() {
    if (!note) return;
    var chosen = instance.options[instance.selectedIndex];
    var text = chosen ? chosen.getAttribute("data-note") || "" : "";
    note.textContent = text;
    note.hidden = !text;
  }

  gpu.addEventListener("change", fill);
  instance.addEventListener("change", describe);
})();
