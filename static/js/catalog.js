// Catalog page: draw the two Plotly figures serialized by the view, and keep the
// compare button honest (2 to 4 ticked GPUs; the server validates the same rule).
(function () {
  "use strict";

  document.querySelectorAll("[data-figure]").forEach(function (div) {
    var source = document.getElementById(div.dataset.figure);
    if (!source || typeof Plotly === "undefined") return;
    var figure = JSON.parse(source.textContent);
    div.innerHTML = "";
    Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displaylogo: false });
  });

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
