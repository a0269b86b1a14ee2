package httpmw_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/httpmw"
)

func TestPanicsBecomeA500Envelope(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	h := httpmw.RequestID(false, httpmw.Recover(logger, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("database password is hunter2")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/anything", nil))
	require.Equal(t, 500, rec.Code)
	var env apierror.Envelope
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
	require.Equal(t, "internal_error", env.Code)
	require.Equal(t, "internal", env.Error)
	require.Equal(t, rec.Header().Get(httpmw.RequestIDHeader), env.RequestID)
	require.NotContains(t, rec.Body.String(), "hunter2")
}

func TestAPanicAfterTheFirstByteCutsTheConnection(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	h := httpmw.Recover(logger, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("email\nada@example.com\n"))
		_ = http.NewResponseController(w).Flush()
		panic("export failed halfway")
	}))
	// Responses are wrapped in a StatusWriter, as Observe does in the server.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(httpmw.NewStatusWriter(w), r)
	}))
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	_, err = io.ReadAll(resp.Body)
	require.Error(t, err, "the client sees the transfer fail instead of a short file")
}

func TestLimitBodiesCapsEachRequestAtItsLimit(t *testing.T) {
	t.Parallel()
	h := httpmw.LimitBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		}
	}), func(r *http.Request) int64 {
		if r.URL.Path == "/files" {
			return 100
		}
		return 10
	})
	for _, tc := range []struct {
		path   string
		size   int
		status int
	}{{"/small", 10, 200}, {"/small", 11, 413}, {"/files", 100, 200}, {"/files", 101, 413}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", tc.path, io.NopCloser(io.LimitReader(zeros{}, int64(tc.size)))))
		require.Equal(t, tc.status, rec.Code, "%s with %d bytes", tc.path, tc.size)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestTheAccessLogKeepsNoTokenThatActsForARecipientOrAMember(t *testing.T) {
	t.Parallel()
	var buf strings.Builder
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	m := httpmw.NewMetrics(prometheus.NewRegistry())
	h := httpmw.Observe(logger, m, func(*http.Request) string { return "op" }, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for path, logged := range map[string]string{
		"/u/SECRET":                              "/u/:token",
		"/t/c/SECRET":                            "/t/c/:token",
		"/t/o/SECRET":                            "/t/o/:token",
		"/v1/invitations/SECRET/accept":          "/v1/invitations/:token/accept",
		"/v1/auth/me/device-tokens/SECRET":       "/v1/auth/me/device-tokens/:token",
		"/v1/contacts/0190f2a4-0000-7000-8000-0": "/v1/contacts/0190f2a4-0000-7000-8000-0",
	} {
		buf.Reset()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path+"?code=SECRET", nil))
		var line struct{ Path string }
		require.NoError(t, json.Unmarshal([]byte(buf.String()), &line))
		require.Equal(t, logged, line.Path)
		require.Equal(t, logged, httpmw.LoggedPath(path))
		require.Equal(t, strings.Contains(logged, "SECRET"), strings.Contains(buf.String(), "SECRET"), buf.String())
	}
}
