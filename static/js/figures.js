// Draw every Plotly figure a view serialized with json_script: <div data-figure="script-id">.
(function () {
  "use strict";
  document.querySelectorAll("[data-figure]").forEach(function (div) {
    var source = document.getElementById(div.dataset.figure);
    if (!source || typeof Plotly === "undefined") return;
    var figure = JSON.parse(source.textContent);
    div.innerHTML = "";
    Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displaylogo: false });
    div.dataset.drawn = "true";
  });
})();
