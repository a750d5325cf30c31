package portal

import (
	"net/http"

	"github.com/convida/convida/pkg/portalaccess"
)

// embedEntry is GET /embed/portal: with ?token= it opens the embedded
// portal (a bad or expired token is 401), without one it is the share
// page of the iframe's session.
func (p *Portal) embedEntry(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("token") {
		p.useToken(w, r, portalaccess.KindEmbed, r.URL.Query().Get("token"), http.StatusUnauthorized)
		return
	}
	if c := p.signedIn(w, r); c != nil {
		p.share(w, r, c)
	}
}

// loaderJS sizes the iframe to its page: the page posts its height to its
// parent, and the loader accepts messages from the portal's origin only.
// The page posts to the origin the loader names in the iframe's URL
// (#origin=…), never to "*".
const loaderJS = `(function () {
  var script = document.currentScript;
  var target = document.querySelector(script.getAttribute("data-target") || "#convida-portal");
  if (!target) { return; }
  var portal = new URL(script.src).origin;
  var frame = document.createElement("iframe");
  frame.src = script.getAttribute("data-url") + "#origin=" + encodeURIComponent(window.location.origin);
  frame.title = script.getAttribute("data-title") || "Convida";
  frame.style.width = "100%";
  frame.style.border = "0";
  frame.setAttribute("loading", "lazy");
  target.appendChild(frame);
  window.addEventListener("message", function (e) {
    if (e.origin !== portal || e.source !== frame.contentWindow) { return; }
    if (e.data && e.data.type === "convida-portal-height" && typeof e.data.height === "number") {
      frame.style.height = Math.ceil(e.data.height) + "px";
    }
  });
})();
`

// loader serves /embed/portal.js, the loader script of the embed.
func (p *Portal) loader(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write([]byte(loaderJS))
}
