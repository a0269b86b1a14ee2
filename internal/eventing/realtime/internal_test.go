package realtime

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

func TestNoticeCarriesDataUntilNotifyLimitThenOnlyTheID(t *testing.T) {
	t.Parallel()
	org, campaign, user := uuid.New(), uuid.New(), uuid.New()
	id, err := uuid.NewV7()
	require.NoError(t, err)
	small := events.Event{ID: id, OrganizationID: org, Type: string(events.ContactCreated), CreatedAt: time.Now(),
		Data: json.RawMessage(`{"campaign_id":"` + campaign.String() + `","user_id":"` + user.String() + `","operation_id":"nope"}`)}
	payload, err := encodeNotice(small)
	require.NoError(t, err)
	var n notice
	require.NoError(t, json.Unmarshal([]byte(payload), &n))
	require.False(t, n.Fetch)
	require.Equal(t, campaign, n.CampaignID)
	require.Equal(t, user, n.UserID)
	require.Equal(t, uuid.Nil, n.OperationID, "a routing field that is not an id is left out")
	require.JSONEq(t, string(small.Data), string(n.Data))

	large := small
	large.Data = json.RawMessage(`{"campaign_id":"` + campaign.String() + `","blob":"` + strings.Repeat("x", maxNotifyBytes) + `"}`)
	payload, err = encodeNotice(large)
	require.NoError(t, err)
	require.Less(t, len(payload), 8000)
	n = notice{}
	require.NoError(t, json.Unmarshal([]byte(payload), &n))
	require.True(t, n.Fetch)
	require.Equal(t, id, n.ID)
	require.Equal(t, org, n.Org)
	require.Empty(t, n.Data)
}

func TestTopicsFiltersAndAccess(t *testing.T) {
	t.Parallel()
	org, user, mailbox := uuid.New(), uuid.New(), uuid.New()
	id, _ := uuid.NewV7()
	e := newEvent(id, org, string(events.MailboxError), time.Now(), nil, routing{EmailAccountID: mailbox, UserID: user})
	require.Equal(t, []string{"org:" + org.String(), "user:" + user.String(), "account:" + mailbox.String()}, e.topicList)

	_, _, err := parseTopic("org:" + strings.ToUpper(org.String()))
	require.NoError(t, err)
	for _, bad := range []string{"org", "team:" + org.String(), "org:123", "org:{" + org.String() + "}"} {
		_, _, err := parseTopic(bad)
		require.Error(t, err, bad)
	}
	for _, bad := range []string{"webhook.test", "nope.*", "campaign.nope", ""} {
		_, err := parseFilter(bad)
		require.Error(t, err, bad)
	}

	info := func(t events.Type) events.Info { i, _ := events.Lookup(t); return i }
	none := map[filter]struct{}{}
	require.True(t, matchFilters(none, info(events.CampaignCreated)))
	require.False(t, matchFilters(none, info(events.CampaignEmailOpened)), "firehose events are opt-in")
	fam := map[filter]struct{}{"campaign.*": {}}
	require.True(t, matchFilters(fam, info(events.CampaignCreated)))
	require.False(t, matchFilters(fam, info(events.CampaignEmailOpened)))
	require.False(t, matchFilters(fam, info(events.RoleCreated)))
	exact := map[filter]struct{}{"campaign.email_opened": {}}
	require.True(t, matchFilters(exact, info(events.CampaignEmailOpened)))

	key := &auth.Principal{Kind: auth.KindAPIKey, OrganizationID: org, Permissions: auth.RealtimeSubscribe | auth.ReadEmails}
	require.True(t, mayReceive(key, e))
	key.Permissions = auth.RealtimeSubscribe | auth.ReadCampaigns
	require.False(t, mayReceive(key, e), "mailbox events need READ_EMAILS")
	key.Permissions, key.AllowedMailboxes = auth.FullAccess, []uuid.UUID{uuid.New()}
	require.False(t, mayReceive(key, e), "a mailbox-scoped key sees only its mailboxes' events")
	require.Error(t, maySubscribe(key, topicAccount, mailbox))

	member := &auth.Principal{Kind: auth.KindSession, OrganizationID: org, UserID: user,
		OrgPermissions: auth.BuiltinRolePermissions[auth.RoleMember]}
	require.True(t, mayReceive(member, e))
	role := newEvent(id, org, string(events.RoleCreated), time.Now(), nil, routing{})
	require.True(t, mayReceive(member, role), "members read the audit trail (view_analytics)")
	member.OrgPermissions &^= auth.ViewAnalytics
	require.False(t, mayReceive(member, role), "a custom role without view_analytics does not")
	require.True(t, mayReceive(&auth.Principal{Kind: auth.KindSession, OrganizationID: org, OrgPermissions: auth.AllOrgPermissions}, role))
	require.False(t, mayReceive(&auth.Principal{Kind: auth.KindSession, OrganizationID: uuid.New(), OrgPermissions: auth.AllOrgPermissions}, role))
	require.NoError(t, maySubscribe(member, topicUser, user))
	require.Error(t, maySubscribe(member, topicUser, uuid.New()))
	require.Error(t, maySubscribe(member, topicOrg, uuid.New()))
}

func TestBulkOperationEventsArePublishedOnTheirBulkTopic(t *testing.T) {
	t.Parallel()
	org, op := uuid.New(), uuid.New()
	id, _ := uuid.NewV7()
	data, err := json.Marshal(events.BulkStarted(op, events.BulkContactsImport, 10, time.Now()))
	require.NoError(t, err)
	e := eventFromRow(id, org, string(events.BulkOperationStarted), time.Now(), data)
	require.Equal(t, []string{"org:" + org.String(), "bulk:" + op.String()}, e.topicList)
}

// harness serves a gateway over a test database, every connection authenticated as principal (the API's
// credential layer is tested through apitest in gateway_test.go).
type harness struct {
	db  *dbtest.DB
	gw  *Gateway
	srv *httptest.Server
	org uuid.UUID
}

func newHarness(t *testing.T, opts Options, verifier ...Verifier) *harness {
	t.Helper()
	d := dbtest.New(t)
	res, err := accounts.Bootstrap(context.Background(), d.Pool, "owner@acme.example", "correct horse battery staple", "acme")
	require.NoError(t, err)
	g := New(d.Pool, slog.New(slog.NewJSONHandler(io.Discard, nil)), opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, g.Close(ctx))
	})
	p := &auth.Principal{Kind: auth.KindAPIKey, OrganizationID: res.OrganizationID, Permissions: auth.FullAccess}
	var v Verifier
	if len(verifier) > 0 {
		v = verifier[0]
	}
	inner := g.Handler(v)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	}))
	// Short server timeouts, as `outflow serve` has long ones: upgraded connections must outlive them.
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	return &harness{db: d, gw: g, srv: srv, org: res.OrganizationID}
}

// announced commits an event of the harness's organization as the Notifier leaves it: in the outbox, with
// the Notifier's acknowledgement (what the gateway's fetch, resume and catch-up read).
func (h *harness) announced(t *testing.T, id uuid.UUID) {
	t.Helper()
	_, err := h.db.OwnerPool(t).Exec(context.Background(), `WITH e AS (
			INSERT INTO event_outbox (organization_id, id, event_type, data) VALUES ($1, $2, 'contact.created', '{}')
			RETURNING organization_id, id)
		INSERT INTO event_consumer_acks (organization_id, event_id, consumer) SELECT organization_id, id, $3 FROM e`,
		h.org, id, ConsumerName)
	require.NoError(t, err)
}

func (h *harness) dial(t *testing.T) *websocket.Conn {
	t.Helper()
	ws := h.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(`{"type":"subscribe","topics":["org:`+h.org.String()+`"]}`)))
	var f map[string]any
	readJSON(t, ws, &f)
	require.Equal(t, "ack", f["type"], f)
	return ws
}

// connect opens a connection and reads its ready frame.
func (h *harness) connect(t *testing.T) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, h.srv.URL, &websocket.DialOptions{Subprotocols: []string{Subprotocol}})
	require.NoError(t, err)
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	var f map[string]any
	readJSON(t, ws, &f)
	require.Equal(t, "ready", f["type"])
	return ws
}

func readJSON(t *testing.T, ws *websocket.Conn, v any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, data, err := ws.Read(ctx)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, v))
}

// A client that stops reading is disconnected with 4001 once its buffer is full, while a client that keeps
// up receives every event: the fan-out never waits for the slow one.
func TestSlowClientIsDisconnectedWithoutStallingOthers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{SendBuffer: 16})
	slow := h.dial(t)
	fast := h.dial(t)

	const total = 300
	got := make(chan int, 1)
	go func() {
		n := 0
		for n < total {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			_, _, err := fast.Read(ctx)
			cancel()
			if err != nil {
				break
			}
			n++
		}
		got <- n
	}()
	blob := `{"blob":"` + strings.Repeat("y", 64<<10) + `"}`
	start := time.Now()
	for range total {
		id, _ := uuid.NewV7()
		h.gw.hub.route(newEvent(id, h.org, string(events.ContactCreated), time.Now(), json.RawMessage(blob), routing{}))
		time.Sleep(time.Millisecond)
	}
	require.Less(t, time.Since(start), 5*time.Second, "routing must not wait for the slow client")
	require.Equal(t, total, <-got, "the fast client receives every event")

	// The slow client reads what reached it, then the close.
	var err error
	for err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, _, err = slow.Read(ctx)
		cancel()
	}
	require.Equal(t, websocket.StatusCode(CloseSlowConsumer), websocket.CloseStatus(err), err)
}

// The listener survives idle waits (its deadline-interrupted waits and checks keep the one connection),
// catches up on what was dispatched while its connection was down, and does not route again what it had
// already routed.
func TestListenerCatchesUpAfterReconnect(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{ListenerPing: 20 * time.Millisecond})
	ws := h.dial(t)
	owner := h.db.OwnerPool(t)
	ctx := context.Background()
	listenerPID := func() int {
		var pid int
		require.NoError(t, owner.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
			ListenerApplicationName).Scan(&pid))
		return pid
	}
	pid := listenerPID()
	time.Sleep(200 * time.Millisecond) // several idle waits and checks
	require.Equal(t, pid, listenerPID(), "idle waits must not cost the connection")

	insert := func(notify bool) uuid.UUID {
		id, _ := uuid.NewV7()
		h.announced(t, id)
		if notify {
			payload, err := encodeNotice(events.Event{ID: id, OrganizationID: h.org, Type: "contact.created", Data: json.RawMessage(`{}`)})
			require.NoError(t, err)
			_, err = owner.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, payload)
			require.NoError(t, err)
		}
		return id
	}
	live := insert(true)
	var f struct {
		Type string    `json:"type"`
		ID   uuid.UUID `json:"id"`
	}
	readJSON(t, ws, &f)
	require.Equal(t, live, f.ID)

	missed := insert(false) // dispatched, but its notice is lost with the connection
	tag, err := owner.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
		ListenerApplicationName)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	readJSON(t, ws, &f)
	require.Equal(t, missed, f.ID)
	after := insert(true)
	readJSON(t, ws, &f)
	require.Equal(t, after, f.ID, "the listener is back, and the event routed before the drop was not repeated")
}

// Across the resume seam each event is sent once: an event both replayed and heard live (its notice
// arriving while or after the replay runs) goes out once, and later live events follow.
func TestResumeSeamSendsEachEventOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	ctx := context.Background()
	for range 5 {
		cursor, _ := uuid.NewV7()
		var stored []uuid.UUID
		for range 3 {
			id, _ := uuid.NewV7()
			h.announced(t, id)
			stored = append(stored, id)
		}
		ws := h.connect(t)
		live := make(chan struct{})
		go func() {
			// The last stored event's notice arrives around the replay; then a new event.
			defer close(live)
			time.Sleep(time.Duration(time.Now().UnixNano()%3) * time.Millisecond)
			h.gw.hub.route(newEvent(stored[2], h.org, "contact.created", time.Now(), json.RawMessage(`{}`), routing{}))
		}()
		require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(`{"type":"subscribe","topics":["org:`+h.org.String()+
			`"],"last_event_id":"`+cursor.String()+`"}`)))
		<-live
		// A new event, committed before its notice is heard (as a dispatch's is): replayed or live, once.
		next, _ := uuid.NewV7()
		h.announced(t, next)
		h.gw.hub.route(newEvent(next, h.org, "contact.created", time.Now(), json.RawMessage(`{}`), routing{}))

		var got []uuid.UUID
		for len(got) < 4 {
			var f struct {
				Type string    `json:"type"`
				ID   uuid.UUID `json:"id"`
			}
			readJSON(t, ws, &f)
			if f.Type == "event" {
				got = append(got, f.ID)
			}
		}
		require.Equal(t, append(stored, next), got)
		rctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, data, err := ws.Read(rctx)
		cancel()
		require.Error(t, err, "nothing more: %s", data)
	}
}

type verifierFunc func(ctx context.Context, token string) (*auth.Principal, error)

func (f verifierFunc) Authenticate(ctx context.Context, token string) (*auth.Principal, error) {
	return f(ctx, token)
}

// A connection whose credential stops verifying (revoked key, expired session) is closed with 4003.
func TestRevokedCredentialClosesTheConnection(t *testing.T) {
	t.Parallel()
	var revoked atomic.Bool
	var org uuid.UUID
	h := newHarness(t, Options{RevalidateInterval: 20 * time.Millisecond}, verifierFunc(func(context.Context, string) (*auth.Principal, error) {
		if revoked.Load() {
			return nil, apierror.Unauthorized("invalid_credential", "revoked")
		}
		return &auth.Principal{Kind: auth.KindAPIKey, OrganizationID: org, Permissions: auth.FullAccess}, nil
	}))
	org = h.org
	ws := h.dial(t)
	time.Sleep(100 * time.Millisecond) // several successful checks keep it open
	revoked.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := ws.Read(ctx)
	require.Equal(t, websocket.StatusCode(CloseCredentialInvalid), websocket.CloseStatus(err), err)
}

// Closing the gateway (server shutdown) ends every connection with 1001 and refuses new ones.
func TestCloseSaysGoingAway(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	ws := h.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	read := make(chan error, 1)
	go func() {
		_, _, err := ws.Read(ctx)
		read <- err
	}()
	require.NoError(t, h.gw.Close(ctx))
	err := <-read
	require.Equal(t, websocket.StatusGoingAway, websocket.CloseStatus(err), err)
	_, resp, err := websocket.Dial(ctx, h.srv.URL, nil)
	require.Error(t, err)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}
