package app

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
	"github.com/outflowhq/outflow/internal/trail/usage"
)

// OrganizationHeader selects the organization of a session request (it overrides the token's claim).
const OrganizationHeader = "X-Organization-Id"

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

const (
	maxRequestIDLen = 128
	maxUserAgentLen = 512
)

// requestID accepts a well-formed X-Request-Id or generates one, echoes it, and puts the request facts in the
// context for the envelope, the logs and the audit trail. With edgeLocation, the edge's location headers give
// the coarse client location.
func requestID(edgeLocation bool, next http.Handler) http.Handler {
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

// recoverPanics turns a panic into a logged 500 in the envelope (when nothing was written yet).
func recoverPanics(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			logger.ErrorContext(r.Context(), "panic serving request", slog.String("request_id", reqctx.ID(r.Context())),
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			if sw, ok := w.(*statusWriter); ok && sw.wrote {
				// Part of the answer is out: cut the connection, so a client cannot take a truncated file
				// (an export) for a complete one.
				panic(http.ErrAbortHandler)
			}
			apierror.Write(w, r, logger, apierror.Internal(nil))
		}()
		next.ServeHTTP(w, r)
	})
}

// statusWriter remembers the status and size of a response for the access log and metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	if !s.wrote {
		s.status, s.wrote = http.StatusOK, true
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// observe writes one structured access-log line and the metrics of every request. The path is logged without
// its query string, which may carry tokens (unsubscribe links, OAuth codes).
func observe(logger *slog.Logger, m *metrics, routers []*api.Server, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if !sw.wrote {
				sw.status = http.StatusOK
			}
			op := operationOf(routers, r)
			elapsed := time.Since(start)
			m.observe(op, r.Method, sw.status, elapsed)
			logger.LogAttrs(r.Context(), slog.LevelInfo, "http request",
				slog.String("request_id", reqctx.ID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.String("operation", op),
				slog.Int("status", sw.status),
				slog.Int64("bytes", sw.bytes),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("client_ip", reqctx.From(r.Context()).ClientIP),
			)
		}()
		next.ServeHTTP(sw, r)
	})
}

// operationOf names the route for logs and metric labels without unbounded cardinality.
func operationOf(routers []*api.Server, r *http.Request) string {
	switch {
	case r.URL.Path == "/healthz":
		return "healthz"
	case r.URL.Path == "/metrics":
		return "metrics"
	}
	for _, router := range routers {
		if route, ok := router.FindPath(r.Method, r.URL); ok {
			return route.OperationID()
		}
	}
	return "unknown"
}

// gate is the credential layer of the request path: it verifies the bearer token once per request, admits
// API keys and OAuth tokens against their per-minute budget, records the outcome in the context (where the
// idempotency layer and the ogen security handler pick it up) and, after the response, queues an API key's
// request for its usage log. It rejects nothing itself: public operations ignore credentials, and the
// security handler answers for the protected ones.
type gate struct {
	authn   *auth.Authenticator
	usage   *usage.Recorder
	routers []*api.Server
	prefix  string
}

func (g *gate) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		p, err := g.authn.Admit(r.Context(), token)
		if p == nil || p.Kind != auth.KindAPIKey || g.usage == nil {
			next.ServeHTTP(w, r.WithContext(auth.WithOutcome(r.Context(), p, err)))
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(auth.WithOutcome(r.Context(), p, err)))
		if !sw.wrote {
			sw.status = http.StatusOK
		}
		info := reqctx.From(r.Context())
		g.usage.Record(usage.Entry{
			OrganizationID: p.OrganizationID, APIKeyID: p.CredentialID, Endpoint: g.endpoint(r), Method: r.Method,
			IP: info.ClientIP, UserAgent: info.UserAgent, Status: sw.status, Latency: time.Since(start), At: start,
		})
	})
}

// endpoint names the route template of r (`/api-keys/{id}`), never the concrete path.
func (g *gate) endpoint(r *http.Request) string {
	for _, router := range g.routers {
		if route, ok := router.FindPath(r.Method, r.URL); ok {
			return route.PathPattern()
		}
	}
	path := strings.TrimPrefix(r.URL.Path, g.prefix)
	if len(path) > 100 {
		path = path[:100]
	}
	return path
}

func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
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
