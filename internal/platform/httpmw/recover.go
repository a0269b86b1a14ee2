package httpmw

import (
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// Recover turns a panic into a logged 500 in the envelope (when nothing was written yet).
func Recover(logger *slog.Logger, next http.Handler) http.Handler {
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
			if sw, ok := w.(*StatusWriter); ok && sw.wrote {
				// Part of the answer is out: cut the connection, so a client cannot take a truncated file
				// (an export) for a complete one.
				panic(http.ErrAbortHandler)
			}
			apierror.Write(w, r, logger, apierror.Internal(nil))
		}()
		next.ServeHTTP(w, r)
	})
}

// LimitBodies caps every request body at the size limit names for it (the deployment's limit, or more for
// routes that take files).
func LimitBodies(next http.Handler, limit func(*http.Request) int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, limit(r))
		next.ServeHTTP(w, r)
	})
}
