// Upload page: fill the column pickers with the chosen file's own header (first line), so a
// mapping is picked from the file rather than typed. Without JavaScript the server fills them
// from the file after the first submit.
(function () {
  "use strict";
  var input = document.querySelector("#upload-form input[type=file]");
  var pickers = document.querySelectorAll("select[data-header-picker]");
  var help = document.getElementById("mapping-help");
  if (!input || !pickers.length || !window.FileReader) return;

  function splitHeader(line) {
    var best = ",", count = -1;
    [",", ";", "|", "\t"].forEach(function (d) {
      var n = line.split(d).length;
      if (n > count) { best = d; count = n; }
    });
    return line.split(best).map(function (name) { return name.trim().replace(/^"|"$/g, ""); });
  }

  function fill(names) {
    pickers.forEach(function (select) {
      var keep = select.value;
      while (select.options.length > 1) select.remove(1);
      names.forEach(function (name) {
        var option = document.createElement("option");
        option.value = name; option.textContent = name;
        if (name === keep) option.selected = true;
        select.appendChild(option);
      });
    });
    if (help) help.textContent = "Columns in your file: " + names.join(", ");
  }

  input.addEventListener("change", function () {
    var file = input.files && input.files[0];
    if (!file) return;
    var reader = new FileReader();
    reader.onload = function () {
      var text = String(reader.result).replace(/^\ufeff/, "");
      fill(splitHeader(text.split(/\r?\n/)[0] || ""));
    };
    reader.readAsText(file.slice(0, 65536));
  });
})();
