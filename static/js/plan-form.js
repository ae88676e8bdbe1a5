// Plan and what-if forms: a model preset fills the architecture fields (they stay editable;
// a changed value plans a variant of the preset) and shows the architecture in words.
// The error summary, when present, takes focus so its links are read first.
(function () {
  "use strict";
  var data = document.getElementById("preset-architectures");
  var select = document.getElementById("id_workload");
  var summary = document.getElementById("preset-summary");
  var errors = document.getElementById("error-summary");
  if (errors) errors.focus();
  if (!data || !select || !summary) return;
  var presets = JSON.parse(data.textContent);
  var names = ["params_billion", "n_layers", "hidden_size", "n_heads", "ffn_hidden_size",
               "vocab_size", "seq_len"];
  var words = {n_layers: " layers", n_heads: " attention heads", ffn_hidden_size: " FFN size",
               vocab_size: " vocabulary tokens", seq_len: " tokens per sequence"};

  function number(value) { return Number(value).toLocaleString("en-US"); }

  function describe(preset) {
    var f = preset.fields, parts = [f.params_billion + " billion parameters"];
    ["n_layers", "hidden_size", "n_heads", "ffn_hidden_size", "vocab_size", "seq_len"]
      .forEach(function (name) {
        if (f[name] === undefined) return;
        parts.push(name === "hidden_size" ? "hidden size " + number(f[name])
                                          : number(f[name]) + words[name]);
      });
    return preset.name + ": " + parts.join(", ") + ".";
  }

  function input(name) { return document.getElementById("id_" + name); }

  function fill() {
    var preset = presets[select.value];
    if (!preset) { summary.hidden = true; return; }
    names.forEach(function (name) {
      var box = input(name);
      if (box) box.value = preset.fields[name] === undefined ? "" : String(preset.fields[name]);
    });
    summary.textContent = describe(preset);
    summary.hidden = false;
  }

  select.addEventListener("change", fill);
  names.forEach(function (name) {
    var box = input(name);
    if (!box) return;
    box.addEventListener("input", function () {
      var preset = presets[select.value];
      if (!preset) return;
      summary.textContent = describe(preset) + " Edited: this plans a variant of " +
        preset.name + " with the values below.";
    });
  });
  // A preset chosen before this script ran (back button, prefilled copy) shows its fields.
  if (presets[select.value] && input("n_layers") && !input("params_billion").value) fill();
})();
