package httpmw

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// StatusWriter remembers the status and size of a response, for the access log, the metrics and the usage
// log (which record what was answered), and for Recover (which must not write an envelope into a response
// already under way).
type StatusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

// NewStatusWriter wraps w.
func NewStatusWriter(w http.ResponseWriter) *StatusWriter { return &StatusWriter{ResponseWriter: w} }

// WriteHeader records the first status written.
func (s *StatusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write records an implicit 200 and counts the bytes.
func (s *StatusWriter) Write(p []byte) (int, error) {
	if !s.wrote {
		s.status, s.wrote = http.StatusOK, true
	}
	n, err := s.ResponseWriter.Write(p)
	s.bytes += int64(n)
	return n, err
}

// Status is the status answered: 200 when the handler wrote nothing (net/http's own answer).
func (s *StatusWriter) Status() int {
	if !s.wrote {
		return http.StatusOK
	}
	return s.status
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *StatusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Metrics are the HTTP series Outflow exports on /metrics.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the HTTP series in reg.
func NewMetrics(reg *prometheus.Registry) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "outflow_http_requests_total",
			Help: "HTTP requests served, by operation, method and status.",
		}, []string{"operation", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "outflow_http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, by operation.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"operation"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *Metrics) observe(operation, method string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(operation, method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(operation).Observe(elapsed.Seconds())
}

// Observe writes one structured access-log line and the metrics of every request, labelled by operation (a
// bounded set of names, never the concrete path). The path is logged without its query string, which may
// carry tokens (OAuth codes), and with the tokens some paths carry in place of their own (LoggedPath).
func Observe(logger *slog.Logger, m *Metrics, operation func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := NewStatusWriter(w)
		defer func() {
			op := operation(r)
			elapsed := time.Since(start)
			m.observe(op, r.Method, sw.Status(), elapsed)
			logger.LogAttrs(r.Context(), slog.LevelInfo, "http request",
				slog.String("request_id", reqctx.ID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", LoggedPath(r.URL.Path)),
				slog.String("operation", op),
				slog.Int("status", sw.Status()),
				slog.Int64("bytes", sw.bytes),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("client_ip", reqctx.From(r.Context()).ClientIP),
			)
		}()
		next.ServeHTTP(sw, r)
	})
}

// tokenPaths are the path prefixes whose next segment is a credential: whoever holds an unsubscribe link, an
// invitation or a device token can act with it, and a tracked link's token carries its target URL.
var tokenPaths = []string{"/t/o/", "/t/c/", "/u/", "/v1/invitations/", "/v1/auth/me/device-tokens/"}

// LoggedPath is a request path as the access log may keep it: the token segment of a tokenPaths path becomes
// ":token", so the log never holds a link that acts for a recipient or a member.
func LoggedPath(path string) string {
	for _, prefix := range tokenPaths {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			_, after, found := strings.Cut(rest, "/")
			if found {
				return prefix + ":token/" + after
			}
			return prefix + ":token"
		}
	}
	return path
}
