// Package idempotency makes writes safe to retry. A write sent with an Idempotency-Key header is run once per
// (credential, key): its response is stored for 24 hours and replayed byte for byte to any retry; the same key
// with a different request is refused (422 idempotency_key_reused); a duplicate that arrives while the first
// is still running is refused (409 idempotency_key_in_progress). Neither refusal ever reaches the handler, so
// a key never causes a second effect.
//
// It works at the HTTP layer, on the raw request and response, so every operation that accepts the header
// gets the same guarantees without handler code.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// noStorePrefix is never stored for replay: account operations answer secrets (TOTP seeds, recovery codes,
// tokens) that must not sit in the idempotency store, and each of them is safe to repeat on its own terms.
const noStorePrefix = "/v1/auth/"

// Header is the request header that carries the key.
const Header = "Idempotency-Key"

// ReplayedHeader is set on a response that was replayed from the store.
const ReplayedHeader = "Idempotent-Replayed"

const (
	maxKeyLen = 255
	// retention is how long a completed response is replayed.
	retention = 24 * time.Hour
	// lockTimeout is how long an in-progress record blocks duplicates; after it, a process that died
	// mid-request no longer holds the key. It exceeds the server's longest request.
	lockTimeout = 2 * time.Minute
	// maxStoredBody bounds what is kept for replay; larger responses are not stored (the key is released).
	maxStoredBody = 1 << 20
)

// Store runs requests under idempotency keys.
type Store struct {
	pool    *pgxpool.Pool
	queries *dbq.Queries
	logger  *slog.Logger
}

// NewStore builds the store over the application pool.
func NewStore(pool *pgxpool.Pool, logger *slog.Logger) *Store {
	return &Store{pool: pool, queries: dbq.New(), logger: logger}
}

// Credential is who sent a write, as replays are kept: a key belongs to one credential (an API key, an OAuth
// token or a session) of one organization, so two callers never see each other's responses.
type Credential struct {
	Organization uuid.UUID
	ID           uuid.UUID
}

// CredentialOf reads the authenticated credential of a request; ok is false when none authenticated. The layer
// that authenticates supplies it, since this package sits below the one that knows principals.
type CredentialOf func(r *http.Request) (c Credential, ok bool)

// Middleware applies idempotency to every POST, PUT, PATCH and DELETE that carries the header and whose
// bearer token authenticated (credentialOf says by which credential); other requests pass straight through.
func (s *Store) Middleware(credentialOf CredentialOf, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(Header)
		c, authenticated := credentialOf(r)
		if key == "" || !authenticated || !isWrite(r.Method) || strings.HasPrefix(r.URL.Path, noStorePrefix) {
			next.ServeHTTP(w, r)
			return
		}
		if len(key) > maxKeyLen {
			apierror.Write(w, r, s.logger, apierror.BadRequest("invalid_idempotency_key",
				fmt.Sprintf("Idempotency-Key must be 1 to %d characters.", maxKeyLen)))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				apierror.Write(w, r, s.logger, apierror.New(http.StatusRequestEntityTooLarge, "request_too_large",
					fmt.Sprintf("The request body exceeds %d bytes.", tooBig.Limit)))
				return
			}
			apierror.Write(w, r, s.logger, apierror.BadRequest("unreadable_body", "The request body could not be read."))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		id := identity{org: c.Organization, credential: c.ID, key: key}
		s.serve(w, r, next, id, fingerprint(r, body))
	})
}

type identity struct {
	org, credential uuid.UUID
	key             string
}

type storedResponse struct {
	status      int
	contentType string
	body        []byte
}

func (s *Store) serve(w http.ResponseWriter, r *http.Request, next http.Handler, id identity, hash []byte) {
	ctx := r.Context()
	stored, err := s.claim(ctx, id, hash)
	if err != nil {
		apierror.Write(w, r, s.logger, err)
		return
	}
	if stored != nil {
		h := w.Header()
		if stored.contentType != "" {
			h.Set("Content-Type", stored.contentType)
		}
		h.Set(ReplayedHeader, "true")
		w.WriteHeader(stored.status)
		_, _ = w.Write(stored.body)
		return
	}

	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	kept := false
	defer func() {
		// A 5xx, a panic or a failed store must not leave the key locked until lockTimeout.
		if !kept {
			s.release(context.WithoutCancel(ctx), id)
		}
	}()
	next.ServeHTTP(rec, r)

	if !replayable(rec.status) || rec.overflow {
		return // nothing worth replaying (or too big to keep): a retry runs again
	}
	err = db.WithOrgTx(context.WithoutCancel(ctx), s.pool, id.org, func(ctx context.Context, tx pgx.Tx) error {
		return s.queries.IdempotencyComplete(ctx, tx, dbq.IdempotencyCompleteParams{
			OrganizationID: id.org, CredentialID: id.credential, Key: id.key,
			ResponseStatus: int32(rec.status), ResponseContentType: rec.Header().Get("Content-Type"),
			ResponseBody: rec.body.Bytes(),
		})
	})
	if err != nil {
		s.logger.ErrorContext(ctx, "store idempotent response", slog.String("error", err.Error()))
		return
	}
	kept = true
}

// claim takes the key for this request, or returns the stored response to replay, or the refusal.
func (s *Store) claim(ctx context.Context, id identity, hash []byte) (*storedResponse, error) {
	var out *storedResponse
	lock, ttl := int32(lockTimeout/time.Second), int32(retention/time.Second)
	err := db.WithOrgTx(ctx, s.pool, id.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := s.queries.IdempotencyClaim(ctx, tx, dbq.IdempotencyClaimParams{
			OrganizationID: id.org, CredentialID: id.credential, Key: id.key, RequestHash: hash,
			LockSeconds: lock, TtlSeconds: ttl,
		})
		if err == nil {
			return nil // claimed: run the request
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		row, err := s.queries.IdempotencyGet(ctx, tx, dbq.IdempotencyGetParams{
			OrganizationID: id.org, CredentialID: id.credential, Key: id.key,
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return errInProgress // released between our insert and this read: the holder just failed
		}
		if err != nil {
			return err
		}
		if row.Expired || (row.State == "in_progress" && row.LockExpired) {
			return s.queries.IdempotencyReclaim(ctx, tx, dbq.IdempotencyReclaimParams{
				OrganizationID: id.org, CredentialID: id.credential, Key: id.key, RequestHash: hash,
				LockSeconds: lock, TtlSeconds: ttl,
			})
		}
		if !bytes.Equal(row.RequestHash, hash) {
			return apierror.Unprocessable("idempotency_key_reused",
				"This Idempotency-Key was already used with a different request. Use a new key for a new request.")
		}
		if row.State == "in_progress" {
			return errInProgress
		}
		out = &storedResponse{status: int(*row.ResponseStatus), body: row.ResponseBody}
		if row.ResponseContentType != nil {
			out.contentType = *row.ResponseContentType
		}
		return nil
	})
	return out, err
}

var errInProgress = apierror.Conflict("idempotency_key_in_progress",
	"A request with this Idempotency-Key is still being processed. Retry after it finishes.")

func (s *Store) release(ctx context.Context, id identity) {
	err := db.WithOrgTx(ctx, s.pool, id.org, func(ctx context.Context, tx pgx.Tx) error {
		return s.queries.IdempotencyRelease(ctx, tx, dbq.IdempotencyReleaseParams{
			OrganizationID: id.org, CredentialID: id.credential, Key: id.key,
		})
	})
	if err != nil {
		s.logger.ErrorContext(ctx, "release idempotency key", slog.String("error", err.Error()))
	}
}

// Sweep deletes expired records of every organization; a periodic job calls it.
func (s *Store) Sweep(ctx context.Context) (int64, error) {
	return s.queries.IdempotencySweep(ctx, s.pool)
}

// fingerprint identifies "the same request": method, path with query, and body.
func fingerprint(r *http.Request, body []byte) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", r.Method, r.URL.RequestURI())
	h.Write(body)
	return h.Sum(nil)
}

// replayable reports whether an answer is the operation's outcome, to be replayed to retries. Refusals that
// depend on the moment rather than the request (unauthenticated, forbidden, conflicting state, rate limited)
// and server errors are not: the operation did not run, and a retry after the cause is fixed must run it.
func replayable(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusConflict, http.StatusTooManyRequests:
		return false
	}
	return status < 500
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// recorder passes the response through while keeping a copy for replay.
type recorder struct {
	http.ResponseWriter
	status   int
	wrote    bool
	body     bytes.Buffer
	overflow bool
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	if !r.overflow {
		if r.body.Len()+len(p) > maxStoredBody {
			r.overflow = true
			r.body.Reset()
		} else {
			r.body.Write(p)
		}
	}
	return r.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer (flush, deadlines).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
