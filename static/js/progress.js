// Long work: poll the JSON status of the element with data-status-url while its run is queued
// or running, move its <progress> bar, and reload the page when the run has finished.
(function () {
  "use strict";
  var box = document.querySelector("[data-status-url]");
  if (!box) return;
  var bar = box.querySelector("progress");
  if (!bar) return;
  var text = box.querySelector(".progress-message");
  // Every run's status URL returns planner.runs.run_status(): id, status, progress_pct,
  // message, error, is_finished, attempts.
  function poll() {
    fetch(box.dataset.statusUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.json(); })
      .then(function (s) {
        bar.value = s.progress_pct;
        if (text) text.textContent = s.message || s.progress_pct + "%";
        if (s.is_finished) { window.location.reload(); } else { window.setTimeout(poll, 700); }
      })
      .catch(function () { window.setTimeout(poll, 2000); });
  }
  window.setTimeout(poll, 300);
})();
