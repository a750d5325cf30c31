// The dashboard's only script besides the vendored libraries (the
// Content-Security-Policy allows no inline script). Everything works
// without it; it adds conveniences.
(function () {
  "use strict";
  // Copy buttons: <button data-copy="element-id" hidden> copies that
  // element's text; shown only where the clipboard API exists.
  function wireCopyButtons(root) {
    root.querySelectorAll("button[data-copy]:not([data-wired])").forEach(function (b) {
      if (!navigator.clipboard) { return; }
      b.setAttribute("data-wired", "");
      b.hidden = false;
      b.addEventListener("click", function () {
        var el = document.getElementById(b.getAttribute("data-copy"));
        if (el) { navigator.clipboard.writeText(el.textContent.trim()); }
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () { wireCopyButtons(document); });
  document.addEventListener("htmx:load", function (e) { wireCopyButtons(e.target); });
})();
