// The folded menu (below 960 px) as a button with aria-expanded; it replaces the checkbox and
// label that open the menu without JavaScript.
(function () {
  "use strict";
  var button = document.getElementById("menu-button");
  var nav = document.getElementById("site-nav");
  var toggle = document.getElementById("menu-toggle");
  var label = document.querySelector("label[for='menu-toggle']");
  if (!button || !nav) return;
  if (toggle) toggle.remove();
  if (label) label.remove();
  button.hidden = false;
  button.addEventListener("click", function () {
    var open = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", open ? "true" : "false");
    nav.classList.toggle("is-open", open);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
      button.setAttribute("aria-expanded", "false");
      nav.classList.remove("is-open");
      button.focus();
    }
  });
})();
