package apierror

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/outflowhq/outflow/reqctx"
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
	w.WriteHeader(e.Status)
	_, _ = w.Write(append(body, '\n'))
}
