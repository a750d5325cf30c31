package httpapi

import (
	"net/http"
	"strings"

	"github.com/convida/convida/pkg/respond"
)

// memberStylePrefixes are the paths whose errors are spelled in the
// member-facing style (MEMBER_NOT_FOUND): the member's own operations and
// the creators' public pages.
var memberStylePrefixes = []string{v1 + "/member/", v1 + "/wallet/", v1 + "/creators/"}

// Starting is what the API answers while its program waits for its
// dependencies: 503 service_unavailable with Retry-After, spelled as the
// route would spell its errors.
func Starting() http.Handler {
	return respond.StartingBy(func(r *http.Request) respond.Style {
		for _, p := range memberStylePrefixes {
			if strings.HasPrefix(r.URL.Path, p) {
				return respond.Member
			}
		}
		return respond.Admin
	})
}
