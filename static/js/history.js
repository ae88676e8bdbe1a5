// History page: poll the run's status until it finishes, then reload; draw the serialized charts.
(function () {
  "use strict";
  var status = document.getElementById("run-status");
  var bar = document.getElementById("run-progress");
  var text = document.getElementById("run-progress-text");

  function poll() {
    fetch(status.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (data) {
        if (bar) bar.value = data.progress_pct;
        if (text) text.textContent = data.progress_pct + "%";
        if (data.is_finished) {
          window.location.reload();
        } else {
          window.setTimeout(poll, 1000);
        }
      })
      .catch(function () { window.setTimeout(poll, 3000); });
  }

  if (status && bar) window.setTimeout(poll, 500);

  document.querySelectorAll("[data-figure]").forEach(function (div) {
    var source = document.getElementById(div.dataset.figure);
    if (!source || typeof Plotly === "undefined") return;
    var figure = JSON.parse(source.textContent);
    div.innerHTML = "";
    Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displaylogo: false });
    div.dataset.drawn = "true";
  });
})();
