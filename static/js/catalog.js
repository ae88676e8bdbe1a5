// Catalog page: keep the compare button honest (2 to 4 ticked GPUs; the server validates the
// same rule). figures.js draws the charts.
(function () {
  "use strict";

  var button = document.getElementById("compare-button");
  var boxes = document.querySelectorAll('#catalog-table input[name="gpu"]');
  function update() {
    var ticked = Array.prototype.filter.call(boxes, function (box) { return box.checked; }).length;
    button.disabled = ticked < 2 || ticked > 4;
    button.textContent = "Compare selected (" + ticked + ")";
  }
  if (button) {
    boxes.forEach(function (box) { box.addEventListener("change", update); });
    update();
  }
})();
