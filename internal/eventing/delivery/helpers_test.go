package delivery_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/delivery"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/egress"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/oauth"
	"github.com/outflowhq/outflow/webhook"
)

// clock is a settable clock shared by the consumer and the deliverer of a test.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// bundle is one test's database, organization and delivery stack, driven by a fake clock: no River worker
// runs; tests call Attempt for what is due.
type bundle struct {
	db         *dbtest.DB
	owner      *pgxpool.Pool // bypasses row-level security, to inspect tables
	org        uuid.UUID
	user       uuid.UUID
	keyring    *seal.Keyring
	jobs       *river.Client[pgx.Tx]
	outbox     *events.Outbox
	dispatcher *events.Dispatcher
	deliverer  *delivery.Deliverer
	clock      *clock
}

type setupOpts struct {
	limits   delivery.Limits
	resolver egress.Resolver
	client   *http.Client
}

func setup(t testing.TB, opts ...func(*setupOpts)) *bundle {
	t.Helper()
	var o setupOpts
	for _, f := range opts {
		f(&o)
	}
	d := dbtest.New(t)
	ctx := context.Background()
	res, err := accounts.Bootstrap(ctx, d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	jobs, err := river.NewClient(riverpgxv5.New(d.Pool), &river.Config{})
	require.NoError(t, err)
	keyring, err := seal.NewKeyring([]byte(strings.Repeat("k", 32)))
	require.NoError(t, err)
	c := &clock{now: time.Now().UTC().Truncate(time.Minute)}
	consumer := delivery.NewConsumer(jobs, delivery.ConsumerOptions{Limits: o.limits, Now: c.Now})
	deliverer := delivery.NewDeliverer(d.Pool, delivery.Options{
		Keyring: keyring, Apps: oauth.WebhookApps{Keyring: keyring}, Jobs: jobs, Now: c.Now, Client: o.client,
		Egress: egress.Options{AllowPrivate: true, Resolver: o.resolver},
	})
	return &bundle{db: d, owner: d.OwnerPool(t), org: res.OrganizationID, user: res.UserID, keyring: keyring, jobs: jobs,
		outbox: events.NewOutbox(jobs), dispatcher: events.NewDispatcher(d.Pool, consumer), deliverer: deliverer, clock: c}
}

// endpoint describes a test endpoint row.
type endpoint struct {
	url        string
	eventTypes []string
	unverified bool
	disabled   bool
	app        uuid.UUID
}

// addEndpoint inserts an endpoint (as the endpoint handlers would have left it) and returns its id and secret.
func (b *bundle) addEndpoint(t testing.TB, e endpoint) (uuid.UUID, string) {
	t.Helper()
	id := uuid.New()
	secret := "whsec_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	sealed := delivery.SealSecret(b.keyring, b.org, id, secret)
	var app uuid.NullUUID
	if e.app != uuid.Nil {
		app = uuid.NullUUID{UUID: e.app, Valid: true}
		sealed = []byte{}
	}
	var verified *time.Time
	if !e.unverified {
		now := time.Now()
		verified = &now
	}
	types := e.eventTypes
	if types == nil {
		types = []string{}
	}
	err := db.WithOrgTx(context.Background(), b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (organization_id, id, url, event_types, enabled, secret_sealed, verified_at, oauth_client_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, b.org, id, e.url, types, !e.disabled, sealed, verified, app)
		return err
	})
	require.NoError(t, err)
	return id, secret
}

// rotate does what POST /webhooks/{id}/rotate-secret does to the row and returns the new secret.
func (b *bundle) rotate(t *testing.T, id uuid.UUID) string {
	t.Helper()
	secret := "whsec_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	err := db.WithOrgTx(context.Background(), b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, secret_sealed = $3,
			secret_generation = secret_generation + 1 WHERE organization_id = $1 AND id = $2`,
			b.org, id, delivery.SealSecret(b.keyring, b.org, id, secret))
		return err
	})
	require.NoError(t, err)
	return secret
}

// emit records an event in the outbox and dispatches it (what the dispatch job does), returning its id.
func (b *bundle) emit(t testing.TB, typ events.Type, data any) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	var id uuid.UUID
	err := db.WithOrgTx(ctx, b.db.Pool, b.org, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		id, err = b.outbox.Emit(ctx, tx, typ, data)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, b.dispatcher.Dispatch(ctx, events.DispatchArgs{OrganizationID: b.org, EventID: id}))
	return id
}

// deliveryRow is a delivery as the tests inspect it.
type deliveryRow struct {
	ID            uuid.UUID
	EndpointID    uuid.UUID
	EventID       uuid.UUID
	EventType     string
	Status        string
	AttemptCount  int
	NextAttemptAt time.Time
	Response      *int
	Excerpt       *string
	Reason        *string
}

func (b *bundle) deliveries(t *testing.T) []deliveryRow {
	t.Helper()
	rows, err := b.owner.Query(context.Background(), `SELECT id, endpoint_id, event_id, event_type, status, attempt_count,
		next_attempt_at, response_status, response_body_excerpt, error_reason FROM webhook_deliveries ORDER BY created_at, id`)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (deliveryRow, error) {
		var d deliveryRow
		err := r.Scan(&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &d.Status, &d.AttemptCount, &d.NextAttemptAt, &d.Response, &d.Excerpt, &d.Reason)
		return d, err
	})
	require.NoError(t, err)
	return out
}

// runDue makes one attempt at every delivery due at the fake clock's time and returns how many it tried.
func (b *bundle) runDue(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	rows, err := b.owner.Query(ctx, `SELECT id FROM webhook_deliveries
		WHERE status IN ('pending', 'failed') AND next_attempt_at <= $1 ORDER BY next_attempt_at, id`, b.clock.Now())
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	require.NoError(t, err)
	for _, id := range ids {
		_, err := b.deliverer.Attempt(ctx, delivery.AttemptArgs{OrganizationID: b.org, DeliveryID: id})
		require.NoError(t, err)
	}
	return len(ids)
}

// nextDue is the earliest next_attempt_at of an unsettled delivery, or false when every delivery settled.
func (b *bundle) nextDue(t *testing.T) (time.Time, bool) {
	t.Helper()
	var at *time.Time
	require.NoError(t, b.owner.QueryRow(context.Background(),
		`SELECT min(next_attempt_at) FROM webhook_deliveries WHERE status IN ('pending', 'failed')`).Scan(&at))
	if at == nil {
		return time.Time{}, false
	}
	return *at, true
}

func (b *bundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, b.owner.QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// hit is one request a receiver got.
type hit struct {
	EventID   string
	EventType string
	Secret    string // the secret whose signature matched; "" when none did
	Status    int
	At        time.Time
}

// receiver is an httptest endpoint that checks every request like a careful subscriber: method, headers,
// body shape and signature (against each of secrets, with a tolerance wide enough for a fake clock).
type receiver struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	secrets []string
	answer  func(h hit) int
	hits    []hit
	bad     []string
}

func newReceiver(t *testing.T, answer func(h hit) int) *receiver {
	r := &receiver{t: t, answer: answer}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// newTLSReceiver is newReceiver over HTTPS, with a client that reaches it under any host name.
func newTLSReceiver(t *testing.T, answer func(h hit) int) (*receiver, *http.Client) {
	r := &receiver{t: t, answer: answer}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	tr := r.srv.Client().Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, r.srv.Listener.Addr().String())
	}
	tr.TLSClientConfig.ServerName = "example.com" // the name httptest's certificate is for
	return r, &http.Client{Transport: tr}
}

func (r *receiver) URL() string { return r.srv.URL + "/hook" }

func (r *receiver) accept(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secrets...)
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var p struct {
		ID             string          `json:"id"`
		EventType      string          `json:"event_type"`
		OrganizationID string          `json:"organization_id"`
		CreatedAt      time.Time       `json:"created_at"`
		Data           json.RawMessage `json:"data"`
	}
	h := hit{At: time.Now()}
	var problems []string
	if err := json.Unmarshal(body, &p); err != nil || p.ID == "" || p.OrganizationID == "" || p.CreatedAt.IsZero() || len(p.Data) == 0 {
		problems = append(problems, "body: "+string(body))
	}
	h.EventID, h.EventType = p.ID, p.EventType
	switch {
	case req.Method != http.MethodPost:
		problems = append(problems, "method "+req.Method)
	case req.Header.Get("Content-Type") != "application/json":
		problems = append(problems, "content type "+req.Header.Get("Content-Type"))
	case req.Header.Get("User-Agent") != webhook.UserAgent:
		problems = append(problems, "user agent "+req.Header.Get("User-Agent"))
	case req.Header.Get(webhook.EventIDHeader) != p.ID:
		problems = append(problems, "event id header "+req.Header.Get(webhook.EventIDHeader))
	case req.Header.Get(webhook.EventHeader) != p.EventType:
		problems = append(problems, "event header "+req.Header.Get(webhook.EventHeader))
	}
	r.mu.Lock()
	for _, s := range r.secrets {
		if webhook.VerifySignature(s, req.Header.Get(webhook.SignatureHeader), body, 72*time.Hour) == nil {
			h.Secret = s
			break
		}
	}
	r.mu.Unlock()
	if h.Secret == "" {
		problems = append(problems, "signature verifies with no secret: "+req.Header.Get(webhook.SignatureHeader))
	}
	h.Status = http.StatusOK
	if r.answer != nil {
		h.Status = r.answer(h)
	}
	r.mu.Lock()
	r.hits = append(r.hits, h)
	r.bad = append(r.bad, problems...)
	r.mu.Unlock()
	w.WriteHeader(h.Status)
	_, _ = io.WriteString(w, "status "+http.StatusText(h.Status))
}

func (r *receiver) Hits() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

// requireClean fails when any request was malformed or badly signed.
func (r *receiver) requireClean(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Empty(t, r.bad)
}

// staticResolver resolves every name to one address (for endpoints with a host name in tests).
type staticResolver struct{ addr net.IP }

func (s staticResolver) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: s.addr}}, nil
}
