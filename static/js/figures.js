// Draw every Plotly figure a view serialized with json_script: <div data-figure="script-id">.
(function () {
  "use strict";
  var NARROW_PX = 600;
  // A page may ship one template for all its figures (<script id="plotly-template">).
  var shared = document.getElementById("plotly-template");
  var template = shared ? JSON.parse(shared.textContent) : null;
  document.querySelectorAll("[data-figure]").forEach(function (div) {
    var source = document.getElementById(div.dataset.figure);
    if (!source || typeof Plotly === "undefined") return;
    var figure = JSON.parse(source.textContent);
    var layout = figure.layout || {};
    if (template && !layout.template) layout.template = template;
    var narrow = div.clientWidth < NARROW_PX;
    if (narrow) {
      // On a phone the legend goes under the plot and its axis title (anchored by its top,
      // with room below), so the plot keeps the width and nothing overlaps.
      var entries = (figure.data || []).filter(function (t) {
        return t.name && t.showlegend !== false;
      }).length;
      var room = entries > 1 ? 70 + 22 * Math.ceil(entries / 2) : 70;  // two entries a row
      layout.legend = Object.assign({}, layout.legend, { orientation: "h", x: 0, y: 0, yanchor: "top" });
      layout.legend.y = -70 / ((layout.height || 450) + room - 60 - room);  // under the axis title
      layout.margin = Object.assign({}, layout.margin, { l: 50, r: 10, b: 60 + room });
      layout.height = (layout.height || 450) + room;
    }
    div.innerHTML = "";
    // The toolbar shows on hover only, and not at all on a phone, where it covered the title.
    Plotly.newPlot(div, figure.data, layout, {
      responsive: true, displaylogo: false, displayModeBar: narrow ? false : "hover"
    });
    div.dataset.drawn = "true";
  });
})();
