package idempotency_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/idempotency"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/internal/trail/audit"
)

type bundle struct {
	db    *dbtest.DB
	srv   *httptest.Server
	key   string
	calls atomic.Int64
	// delay widens the window in which concurrent duplicates race; benchmarks set it to zero.
	delay time.Duration
}

// setup serves a write endpoint whose effect is one audit row per handled request, behind the real
// authenticator and the idempotency middleware.
func setup(t testing.TB) *bundle {
	t.Helper()
	d := dbtest.New(t)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	res, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	b := &bundle{db: d, key: res.APIKey, delay: 30 * time.Millisecond}
	authn := auth.NewAuthenticator(d.Pool, nil)

	effect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.calls.Add(1)
		var in struct {
			Name   string `json:"name"`
			Fail   bool   `json:"fail"`
			Refuse int    `json:"refuse"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			apierror.Write(w, r, logger, apierror.BadRequest("invalid_body", err.Error()))
			return
		}
		if in.Fail {
			apierror.Write(w, r, logger, fmt.Errorf("backend exploded"))
			return
		}
		if in.Refuse != 0 {
			apierror.Write(w, r, logger, apierror.New(in.Refuse, "refused", "Not now."))
			return
		}
		time.Sleep(b.delay)
		p := auth.PrincipalFrom(r.Context())
		err := db.WithOrgTx(r.Context(), d.Pool, p.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
			return audit.Record(ctx, tx, audit.Entry{Action: audit.ActionCreate, Event: "widget.created", EntityType: "widget", EntityID: in.Name})
		})
		if err != nil {
			apierror.Write(w, r, logger, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprintf(w, `{"name":%q,"served_at":%q}`, in.Name, time.Now().Format(time.RFC3339Nano))
	})
	mw := idempotency.NewStore(d.Pool, logger).Middleware(principalCredential, effect)
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		p, err := authn.Authenticate(r.Context(), token)
		if err != nil {
			apierror.Write(w, r, logger, err)
			return
		}
		mw.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// principalCredential reads the principal the test server authenticated, as the composition root does.
func principalCredential(r *http.Request) (idempotency.Credential, bool) {
	p := auth.PrincipalFrom(r.Context())
	if p == nil {
		return idempotency.Credential{}, false
	}
	return idempotency.Credential{Organization: p.OrganizationID, ID: p.CredentialID}, true
}

type result struct {
	status   int
	body     string
	replayed bool
	code     string
}

func (b *bundle) post(t testing.TB, key, idemKey, body string) result {
	t.Helper()
	return b.send(t, http.MethodPost, key, idemKey, body)
}

func (b *bundle) send(t testing.TB, method, key, idemKey, body string) result {
	t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+"/v1/widgets", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	if idemKey != "" {
		req.Header.Set(idempotency.Header, idemKey)
	}
	resp, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := result{status: resp.StatusCode, body: string(raw), replayed: resp.Header.Get(idempotency.ReplayedHeader) == "true"}
	if resp.StatusCode >= 400 {
		var env apierror.Envelope
		require.NoError(t, json.Unmarshal(raw, &env), string(raw))
		r.code = env.Code
	}
	return r
}

func (b *bundle) effects(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.OwnerPool(t).QueryRow(context.Background(),
		"SELECT count(*) FROM audit_log WHERE event = 'widget.created'").Scan(&n))
	return n
}

func TestConcurrentDuplicatesCauseOneEffect(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 50
	results := make([]result, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i] = b.post(t, b.key, "create-widget-1", `{"name":"w1"}`)
		}()
	}
	close(start)
	wg.Wait()

	require.Equal(t, 1, b.effects(t), "fifty identical requests, one effect")
	var created []string
	for _, r := range results {
		switch r.status {
		case http.StatusCreated:
			created = append(created, r.body)
		case http.StatusConflict:
			require.Equal(t, "idempotency_key_in_progress", r.code)
		default:
			t.Fatalf("unexpected response %d %s", r.status, r.body)
		}
	}
	require.NotEmpty(t, created)
	for _, body := range created {
		require.Equal(t, created[0], body, "every success is the same stored response")
	}

	// A retry after completion replays the first response byte for byte, without running the handler.
	calls := b.calls.Load()
	r := b.post(t, b.key, "create-widget-1", `{"name":"w1"}`)
	require.Equal(t, http.StatusCreated, r.status)
	require.True(t, r.replayed)
	require.Equal(t, created[0], r.body)
	require.Equal(t, calls, b.calls.Load())
	require.Equal(t, 1, b.effects(t))
}

func TestReusedKeyWithAnotherRequestIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, http.StatusCreated, b.post(t, b.key, "k", `{"name":"a"}`).status)

	r := b.post(t, b.key, "k", `{"name":"b"}`)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Equal(t, "idempotency_key_reused", r.code)

	r = b.send(t, http.MethodPatch, b.key, "k", `{"name":"a"}`)
	require.Equal(t, "idempotency_key_reused", r.code, "the method is part of the request")
	require.Equal(t, 1, b.effects(t))
}

func TestKeysArePerCredential(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// A second key of the same organization (bootstrap re-run replaces the first, so mint one directly).
	second := auth.MintAPIKey()
	var org string
	owner := b.db.OwnerPool(t)
	require.NoError(t, owner.QueryRow(context.Background(), "SELECT organization_id::text FROM api_keys LIMIT 1").Scan(&org))
	_, err := owner.Exec(context.Background(), `INSERT INTO api_keys (organization_id, id, name, key_hash, key_prefix, key_suffix, permissions)
		VALUES ($1, gen_random_uuid(), 'second', $2, $3, $4, 1)`, org, second.Hash, second.Prefix, second.Suffix)
	require.NoError(t, err)

	require.Equal(t, http.StatusCreated, b.post(t, b.key, "same", `{"name":"x"}`).status)
	r := b.post(t, second.Secret, "same", `{"name":"x"}`)
	require.Equal(t, http.StatusCreated, r.status)
	require.False(t, r.replayed)
	require.Equal(t, 2, b.effects(t))
}

func TestServerErrorsReleaseTheKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.post(t, b.key, "flaky", `{"name":"x","fail":true}`)
	require.Equal(t, http.StatusInternalServerError, r.status)
	r = b.post(t, b.key, "flaky", `{"name":"x","fail":true}`)
	require.Equal(t, http.StatusInternalServerError, r.status)
	require.False(t, r.replayed, "a 5xx is never replayed: the retry ran the handler again")
	require.Equal(t, int64(2), b.calls.Load())

	// Client errors are stored and replayed like successes.
	r = b.post(t, b.key, "bad", `not json`)
	require.Equal(t, http.StatusBadRequest, r.status)
	r = b.post(t, b.key, "bad", `not json`)
	require.True(t, r.replayed)
	require.Equal(t, int64(3), b.calls.Load())
}

// TestRefusalsReleaseTheKey: a refusal that depends on the moment (forbidden, conflicting state, rate
// limited) means the operation did not run, so a retry after the cause is fixed runs it.
func TestRefusalsReleaseTheKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for i, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusConflict, http.StatusTooManyRequests} {
		key := fmt.Sprintf("refused-%d", status)
		body := fmt.Sprintf(`{"name":"x","refuse":%d}`, status)
		r := b.post(t, b.key, key, body)
		require.Equal(t, status, r.status)
		r = b.post(t, b.key, key, body)
		require.Equal(t, status, r.status)
		require.False(t, r.replayed, "%d is not replayed", status)
		require.Equal(t, int64(2*(i+1)), b.calls.Load())
	}
}

func TestExpiredRecordsAreReclaimedAndSwept(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	owner := b.db.OwnerPool(t)
	require.Equal(t, http.StatusCreated, b.post(t, b.key, "old", `{"name":"x"}`).status)

	_, err := owner.Exec(ctx, "UPDATE idempotency_keys SET expires_at = now() - interval '1 second'")
	require.NoError(t, err)
	r := b.post(t, b.key, "old", `{"name":"y"}`)
	require.Equal(t, http.StatusCreated, r.status, "after 24 h the key is free again")
	require.False(t, r.replayed)

	_, err = owner.Exec(ctx, "UPDATE idempotency_keys SET expires_at = now() - interval '1 second'")
	require.NoError(t, err)
	deleted, err := idempotency.NewStore(b.db.Pool, slog.Default()).Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), deleted)
}

func TestOnlyWritesWithAValidKeyAreTracked(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.post(t, b.key, strings.Repeat("k", 256), `{"name":"x"}`)
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Equal(t, "invalid_idempotency_key", r.code)

	require.Equal(t, http.StatusCreated, b.post(t, b.key, "", `{"name":"x"}`).status)
	require.Equal(t, http.StatusCreated, b.post(t, b.key, "", `{"name":"x"}`).status)
	require.Equal(t, 2, b.effects(t), "without a key every request runs")

	var n int
	require.NoError(t, b.db.OwnerPool(t).QueryRow(context.Background(), "SELECT count(*) FROM idempotency_keys").Scan(&n))
	require.Zero(t, n)
}

func TestAnonymousWritesPassThroughUntracked(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	var calls atomic.Int64
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusCreated)
	})
	anonymous := func(*http.Request) (idempotency.Credential, bool) { return idempotency.Credential{}, false }
	mw := idempotency.NewStore(d.Pool, slog.New(slog.DiscardHandler)).Middleware(anonymous, next)
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/v1/widgets", strings.NewReader(`{"name":"x"}`))
		req.Header.Set(idempotency.Header, "same")
		rec := httptest.NewRecorder()
		mw.ServeHTTP(rec, req)
		require.Equal(t, http.StatusCreated, rec.Code)
		require.Empty(t, rec.Header().Get(idempotency.ReplayedHeader))
	}
	require.EqualValues(t, 2, calls.Load(), "a request no credential authenticated is never replayed")
	var n int
	require.NoError(t, d.OwnerPool(t).QueryRow(context.Background(), "SELECT count(*) FROM idempotency_keys").Scan(&n))
	require.Zero(t, n)
}
