package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/convida/convida/pkg/apperr"
	"github.com/convida/convida/pkg/openapi"
	"github.com/convida/convida/pkg/respond"
)

// registerDocs adds GET /api/v1/openapi.json: the OpenAPI document as JSON,
// served without an API key and outside the rate limit. It is cacheable
// (Cache-Control, a strong ETag) and answers 304 to a matching
// If-None-Match. It must be registered before the subrouters, which match
// every path.
func (s *Server) registerDocs(r *mux.Router) {
	r.HandleFunc(v1+"/openapi.json", s.serveOpenAPI).Methods(http.MethodGet)
}

// docsMaxAge is how long clients and proxies may reuse the document
// without revalidating it; a deploy changes it at most that late.
const docsMaxAge = 5 * 60

// docsFile is the served document and its ETag.
type docsFile struct {
	body []byte
	etag string
}

// newDocsFile returns the document whose servers are the configured public
// URLs (Config.PublicURL, Config.IngestPublicURL).
func (s *Server) newDocsFile() (docsFile, error) {
	body, err := openapi.DocumentAt(s.cfg.PublicURL, s.cfg.IngestPublicURL)
	if err != nil {
		return docsFile{}, err
	}
	sum := sha256.Sum256(body)
	return docsFile{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	doc, err := s.docs()
	if err != nil {
		respond.Error(w, s.log, respond.Admin, apperr.Wrap(apperr.Internal, err, "internal error"))
		return
	}
	h := w.Header()
	h.Set("ETag", doc.etag)
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(docsMaxAge))
	if etagMatches(r.Header.Get("If-None-Match"), doc.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(doc.body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc.body)
}

// etagMatches implements If-None-Match's weak comparison (RFC 9110 13.1.2):
// "*" or any listed tag equal to etag, a W/ prefix ignored.
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}
