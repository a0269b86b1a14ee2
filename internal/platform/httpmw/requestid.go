package httpmw

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"strings"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// OrganizationHeader selects the organization of a session request (it overrides the token's claim).
const OrganizationHeader = "X-Organization-Id"

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

const (
	maxRequestIDLen = 128
	maxUserAgentLen = 512
)

// RequestID accepts a well-formed X-Request-Id or generates one, echoes it, and puts the request facts in the
// context for the envelope, the logs and the audit trail. With edgeLocation, the edge's location headers give
// the coarse client location.
func RequestID(edgeLocation bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			var b [16]byte
			_, _ = rand.Read(b[:])
			id = "req_" + hex.EncodeToString(b[:])
		}
		w.Header().Set(RequestIDHeader, id)
		ua := r.UserAgent()
		if len(ua) > maxUserAgentLen {
			ua = ua[:maxUserAgentLen]
		}
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		org := r.Header.Get(OrganizationHeader)
		if len(org) > 64 {
			org = org[:64]
		}
		info := reqctx.Info{ID: id, ClientIP: host, UserAgent: ua, Organization: org}
		if edgeLocation {
			info.Location = edgeLocationOf(r.Header)
		}
		ctx := reqctx.With(r.Context(), info)
		ctx = apierror.WithHints(ctx)
		next.ServeHTTP(apierror.HintWriter(ctx, w), r.WithContext(ctx))
	})
}

// validRequestID accepts ids a client may choose: short, printable, no spaces (they end up in log lines).
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for _, c := range id {
		if c <= ' ' || c > '~' {
			return false
		}
	}
	return true
}

// edgeLocationOf reads Cloudflare-style location headers, bounded and printable only.
func edgeLocationOf(h http.Header) reqctx.Location {
	clean := func(v string) string {
		if len(v) > 80 || !validRequestID(strings.ReplaceAll(v, " ", "_")) {
			return ""
		}
		return v
	}
	cc := strings.ToUpper(clean(h.Get("CF-IPCountry")))
	if len(cc) != 2 || cc == "XX" || cc == "T1" {
		cc = ""
	}
	return reqctx.Location{City: clean(h.Get("CF-IPCity")), Region: clean(h.Get("CF-Region")), Country: cc, CountryCode: cc}
}
