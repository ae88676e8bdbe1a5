// Instance page: draw the $/hour per region and purchase option chart serialized by the view.
(function () {
  "use strict";
  document.querySelectorAll("[data-figure]").forEach(function (div) {
    var source = document.getElementById(div.dataset.figure);
    if (!source || typeof Plotly === "undefined") return;
    var figure = JSON.parse(source.textContent);
    div.innerHTML = "";
    Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displaylogo: false });
  });
})();
