// The portal works without JavaScript; with it, the copy buttons show and
// copy, and an embedded page tells its loader its height, posting only to
// the origin the loader named (#origin=…) when it is one of the merchant's
// embed origins, never to "*".
(function () {
  document.querySelectorAll("button.copy").forEach(function (b) {
    if (!navigator.clipboard) { return; }
    b.hidden = false;
    b.addEventListener("click", function () {
      navigator.clipboard.writeText(b.getAttribute("data-copy")).then(function () {
        b.setAttribute("aria-live", "polite");
        b.dataset.label = b.dataset.label || b.textContent;
        b.textContent = "✓ " + b.dataset.label;
      });
    });
  });
  if (window.parent === window || !document.body.classList.contains("embedded")) { return; }
  var m = /[#&]origin=([^&]+)/.exec(window.location.hash);
  var origin = m ? decodeURIComponent(m[1]) : (sessionStorage.getItem("convida-origin") || "");
  var allowed = (document.body.getAttribute("data-origins") || "").split(" ");
  if (allowed.indexOf(origin) < 0) { return; }
  sessionStorage.setItem("convida-origin", origin);
  function post() {
    window.parent.postMessage({ type: "convida-portal-height", height: document.documentElement.scrollHeight }, origin);
  }
  window.addEventListener("load", post);
  new ResizeObserver(post).observe(document.body);
})();
