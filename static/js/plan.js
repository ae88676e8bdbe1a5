// Plan page: poll the status JSON while the plan is queued or running, then reload;
// when done, draw the figures the view serialized.
(function () {
  "use strict";
  var box = document.getElementById("progress");
  if (box) {
    var bar = box.querySelector("progress");
    var text = box.querySelector(".progress-message");
    var poll = function () {
      fetch(box.dataset.statusUrl, { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (s) {
          bar.value = s.progress_pct;
          text.textContent = s.message || s.status;
          if (s.status === "done" || s.status === "failed") { window.location.reload(); }
          else { setTimeout(poll, 700); }
        })
        .catch(function () { setTimeout(poll, 2000); });
    };
    poll();
  }
  document.querySelectorAll("[data-figure]").forEach(function (div) {
    var source = document.getElementById(div.dataset.figure);
    if (!source || typeof Plotly === "undefined") return;
    var figure = JSON.parse(source.textContent);
    Plotly.newPlot(div, figure.data, figure.layout, { responsive: true, displaylogo: false });
  });
})();
