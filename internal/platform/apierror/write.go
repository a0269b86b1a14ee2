package apierror

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// Envelope is the JSON body of every error response.
type Envelope struct {
	Error     string `json:"error"`
	Message   string `json:"message"`
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
	Fix       string `json:"fix,omitempty"`
}

// EnvelopeFor builds the body for e as seen by the request in ctx.
func EnvelopeFor(ctx context.Context, e *Error) Envelope {
	return Envelope{Error: Word(e.Status), Message: e.Message, Code: e.Code, RequestID: reqctx.ID(ctx), Fix: e.Fix}
}

// Log records e at the level its status deserves: client mistakes at Info, server failures at Error with
// their cause. It is the only place an error's cause is written anywhere.
func Log(ctx context.Context, logger *slog.Logger, e *Error) {
	attrs := []any{slog.String("request_id", reqctx.ID(ctx)), slog.Int("status", e.Status), slog.String("code", e.Code)}
	if e.cause != nil {
		attrs = append(attrs, slog.String("cause", e.cause.Error()))
	}
	if e.Status >= 500 {
		logger.ErrorContext(ctx, "request failed", attrs...)
		return
	}
	logger.InfoContext(ctx, "request refused", attrs...)
}

// Write logs err and answers it in the envelope. Use it wherever an error is written outside ogen's
// generated encoders.
func Write(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e := From(err)
	Log(r.Context(), logger, e)
	body, _ := json.Marshal(EnvelopeFor(r.Context(), e))
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	if e.Status == http.StatusUnauthorized && h.Get("WWW-Authenticate") == "" {
		h.Set("WWW-Authenticate", e.Challenge())
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}

// bearerChallenge is the WWW-Authenticate value of a 401 (RFC 7235 requires one): the API takes bearer
// tokens (RFC 6750 section 3).
const bearerChallenge = `Bearer realm="outflow"`

// Challenge is the WWW-Authenticate value e is answered with when it is a 401: the bearer challenge, with
// error="invalid_token" when a token was sent and authenticates nothing. A request that sent no credential
// gets no error code (RFC 6750 section 3.1).
func (e *Error) Challenge() string {
	if e.invalidToken {
		return bearerChallenge + `, error="invalid_token"`
	}
	return bearerChallenge
}

// hints carries response headers an error decided on while the response is written by code that cannot set
// headers itself (ogen's generated encoders).
type hints struct {
	retryAfter int
	challenge  string
}

type hintsKey struct{}

// WithHints prepares ctx to carry header hints for one response; the request middleware calls it and applies
// them with HintWriter.
func WithHints(ctx context.Context) context.Context {
	return context.WithValue(ctx, hintsKey{}, &hints{})
}

// NoteHeaders records the headers e's answer carries (Retry-After of a 429, WWW-Authenticate of a 401) for
// the response of ctx's request.
func NoteHeaders(ctx context.Context, e *Error) {
	h, ok := ctx.Value(hintsKey{}).(*hints)
	if !ok {
		return
	}
	if e.RetryAfter > 0 {
		h.retryAfter = e.RetryAfter
	}
	if e.Status == http.StatusUnauthorized {
		h.challenge = e.Challenge()
	}
}

// HintWriter applies the hints of ctx to w's headers when the status is written.
func HintWriter(ctx context.Context, w http.ResponseWriter) http.ResponseWriter {
	h, ok := ctx.Value(hintsKey{}).(*hints)
	if !ok {
		return w
	}
	return &hintWriter{ResponseWriter: w, hints: h}
}

type hintWriter struct {
	http.ResponseWriter
	hints *hints
}

func (w *hintWriter) WriteHeader(code int) {
	if code == http.StatusTooManyRequests && w.hints.retryAfter > 0 && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(w.hints.retryAfter))
	}
	if code == http.StatusUnauthorized && w.hints.challenge != "" && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", w.hints.challenge)
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *hintWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
