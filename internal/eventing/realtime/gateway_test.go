package realtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/eventing/realtime"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// frame is any server frame.
type frame struct {
	Type           string          `json:"type"`
	RequestID      string          `json:"request_id"`
	Code           string          `json:"code"`
	Message        string          `json:"message"`
	Topics         []string        `json:"topics"`
	Events         []string        `json:"events"`
	Replayed       *int            `json:"replayed"`
	ID             uuid.UUID       `json:"id"`
	EventType      string          `json:"event_type"`
	OrganizationID uuid.UUID       `json:"organization_id"`
	UserID         uuid.UUID       `json:"user_id"`
	CreatedAt      time.Time       `json:"created_at"`
	Data           json.RawMessage `json:"data"`
	Replay         bool            `json:"replay"`
}

// client is a test WebSocket client; a goroutine reads its frames into a channel.
type client struct {
	ws     *websocket.Conn
	frames chan frame
	ready  frame
	err    chan error
}

type dialConfig struct {
	opts  websocket.DialOptions
	query string
}

type dialOpt func(*dialConfig)

func withProtocols(p ...string) dialOpt {
	return func(c *dialConfig) { c.opts.Subprotocols = p }
}

func withHeader(k, v string) dialOpt {
	return func(c *dialConfig) { c.opts.HTTPHeader.Set(k, v) }
}

func withQuery(q string) dialOpt {
	return func(c *dialConfig) { c.query = "?" + q }
}

// tryDial opens /v1/realtime on base with token as the bearer header ("" sends none).
func tryDial(t *testing.T, base, token string, opts ...dialOpt) (*client, *http.Response, error) {
	t.Helper()
	cfg := &dialConfig{opts: websocket.DialOptions{HTTPHeader: http.Header{}, Subprotocols: []string{realtime.Subprotocol}}}
	if token != "" {
		cfg.opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	}
	for _, f := range opts {
		f(cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, base+"/v1/realtime"+cfg.query, &cfg.opts)
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(1 << 20)
	c := &client{ws: ws, frames: make(chan frame, 1024), err: make(chan error, 1)}
	t.Cleanup(func() { _ = ws.CloseNow() })
	go func() {
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				c.err <- err
				close(c.frames)
				return
			}
			var f frame
			if err := json.Unmarshal(data, &f); err != nil {
				c.err <- err
				close(c.frames)
				return
			}
			c.frames <- f
		}
	}()
	c.ready = c.next(t)
	require.Equal(t, "ready", c.ready.Type)
	return c, resp, nil
}

func dial(t *testing.T, base, token string, opts ...dialOpt) *client {
	t.Helper()
	c, _, err := tryDial(t, base, token, opts...)
	require.NoError(t, err)
	return c
}

// refused dials and returns the error envelope of the refusal.
func refused(t *testing.T, base, token string, status int, opts ...dialOpt) api.Error {
	t.Helper()
	_, resp, err := tryDial(t, base, token, opts...)
	require.Error(t, err)
	require.NotNil(t, resp, err)
	require.Equal(t, status, resp.StatusCode)
	var env api.Error
	body, _ := io.ReadAll(resp.Body)
	require.NoError(t, json.Unmarshal(body, &env), string(body))
	return env
}

func (c *client) next(t *testing.T) frame {
	t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			t.Fatalf("connection closed: %v", <-c.err)
		}
		return f
	case <-time.After(15 * time.Second):
		t.Fatal("no frame within 15 s")
		return frame{}
	}
}

// quiet asserts no frame arrives for d.
func (c *client) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case f := <-c.frames:
		t.Fatalf("unexpected frame %+v", f)
	case <-time.After(d):
	}
}

func (c *client) send(t *testing.T, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, c.ws.Write(ctx, websocket.MessageText, b))
}

// subscribe sends a subscribe frame and returns the answer (ack or error).
func (c *client) subscribe(t *testing.T, f map[string]any) frame {
	t.Helper()
	f["type"] = "subscribe"
	c.send(t, f)
	return c.next(t)
}

func (c *client) event(t *testing.T) frame {
	t.Helper()
	f := c.next(t)
	require.Equal(t, "event", f.Type, "%+v", f)
	return f
}

// tenant is one organization with its owner's session and full-access key.
type tenant struct {
	accounts.BootstrapResult
	session string
	sdk     *api.Client
}

func newTenant(t *testing.T, env *apitest.Env, name string) tenant {
	t.Helper()
	res := env.Bootstrap(t, name)
	tokens := env.SignIn(t, "owner@"+name+".example", apitest.Password)
	return tenant{BootstrapResult: res, session: tokens.AccessToken, sdk: env.Client(t, tokens.AccessToken)}
}

func (tn tenant) org() string { return "org:" + tn.OrganizationID.String() }

func (tn tenant) createRole(t *testing.T, name string) uuid.UUID {
	t.Helper()
	role, err := tn.sdk.OrganizationsCreateRole(context.Background(), &api.CustomRoleCreate{Name: name,
		Permissions: []api.OrganizationPermission{api.OrganizationPermissionViewContacts}}, api.OrganizationsCreateRoleParams{})
	require.NoError(t, err)
	return role.ID
}

func (tn tenant) key(t *testing.T, env *apitest.Env, perms auth.Permission) string {
	t.Helper()
	k, err := env.Client(t, tn.APIKey).APIKeysCreate(context.Background(),
		&api.CreateAPIKey{Name: fmt.Sprintf("rt-%d", perms), Permissions: int64(perms)}, api.APIKeysCreateParams{})
	require.NoError(t, err)
	return k.Secret
}

func roleID(t *testing.T, f frame) uuid.UUID {
	t.Helper()
	var d struct {
		RoleID uuid.UUID `json:"role_id"`
	}
	require.NoError(t, json.Unmarshal(f.Data, &d))
	return d.RoleID
}

// waitDispatched waits until every event of org has been dispatched.
func waitDispatched(t *testing.T, env *apitest.Env, org uuid.UUID) {
	t.Helper()
	owner := env.DB.OwnerPool(t)
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, owner.QueryRow(context.Background(),
			"SELECT count(*) FROM event_outbox WHERE organization_id = $1 AND dispatched_at IS NULL", org).Scan(&n))
		return n == 0
	}, 15*time.Second, 20*time.Millisecond)
}

// The done-when: WebSocket clients on two instances both receive an event emitted on one; another
// organization's client receives nothing and may not subscribe to the first organization's topics.
func TestEventReachesClientsOnEveryInstance(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	second := env.Instance(t)
	env.StartWorkers(t)
	acme := newTenant(t, env, "acme")
	globex := newTenant(t, env, "globex")

	one := dial(t, env.Server.URL, acme.APIKey)
	require.Equal(t, acme.OrganizationID, one.ready.OrganizationID)
	two := dial(t, second.URL, acme.session) // a session on the other instance
	require.Equal(t, acme.UserID, two.ready.UserID)
	for _, c := range []*client{one, two} {
		ack := c.subscribe(t, map[string]any{"request_id": "r1", "topics": []string{acme.org()}})
		require.Equal(t, "ack", ack.Type, "%+v", ack)
		require.Equal(t, "r1", ack.RequestID)
		require.Equal(t, []string{acme.org()}, ack.Topics)
	}
	other := dial(t, second.URL, globex.APIKey)
	refusal := other.subscribe(t, map[string]any{"request_id": "x", "topics": []string{acme.org()}})
	require.Equal(t, "error", refusal.Type)
	require.Equal(t, "forbidden_topic", refusal.Code)
	refusal = other.subscribe(t, map[string]any{"topics": []string{"user:" + acme.UserID.String()}})
	require.Equal(t, "forbidden_topic", refusal.Code)
	require.Equal(t, "ack", other.subscribe(t, map[string]any{"topics": []string{globex.org()}}).Type)

	role := acme.createRole(t, "Recruiter")
	for _, c := range []*client{one, two} {
		ev := c.event(t)
		require.Equal(t, "role.created", ev.EventType)
		require.Equal(t, acme.OrganizationID, ev.OrganizationID)
		require.Equal(t, role, roleID(t, ev))
		require.False(t, ev.Replay)
		require.WithinDuration(t, time.Now(), ev.CreatedAt, time.Minute)
	}
	other.quiet(t, 300*time.Millisecond)
	one.quiet(t, 0)
	two.quiet(t, 0)
}

func TestConnectionsAreAuthenticatedLikeTheAPI(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	acme := newTenant(t, env, "acme")
	base := env.Server.URL

	require.Equal(t, "missing_credential", refused(t, base, "", http.StatusUnauthorized).Code)
	require.Equal(t, "invalid_credential", refused(t, base, "ofk_"+strings.Repeat("a", 43), http.StatusUnauthorized).Code)
	noScope := acme.key(t, env, auth.ReadOnly&^auth.RealtimeSubscribe)
	require.Equal(t, "missing_scope", refused(t, base, noScope, http.StatusForbidden).Code)
	require.Equal(t, "not_a_member", refused(t, base, acme.session, http.StatusForbidden,
		withHeader("X-Organization-Id", uuid.NewString())).Code)

	// A plain GET (no upgrade) is answered in the envelope too.
	resp := env.Do(t, http.MethodGet, "/v1/realtime", acme.APIKey, nil, nil)
	require.Equal(t, http.StatusUpgradeRequired, resp.StatusCode)

	// Browsers: the token as a subprotocol beside outflow.v1, never echoed back; the organization as a
	// query parameter.
	browser := withProtocols(realtime.Subprotocol, realtime.BearerProtocolPrefix+acme.session)
	c, resp, err := tryDial(t, base, "", browser, withQuery("organization_id="+acme.OrganizationID.String()))
	require.NoError(t, err)
	require.Equal(t, realtime.Subprotocol, c.ws.Subprotocol())
	require.Equal(t, realtime.Subprotocol, resp.Header.Get("Sec-WebSocket-Protocol"))
	require.Equal(t, acme.OrganizationID, c.ready.OrganizationID)
	require.Equal(t, "not_a_member", refused(t, base, "", http.StatusForbidden, browser,
		withQuery("organization_id="+uuid.NewString())).Code)
	require.Equal(t, "subprotocol_required", refused(t, base, "", http.StatusBadRequest,
		withProtocols(realtime.BearerProtocolPrefix+acme.APIKey)).Code)
	require.Equal(t, "missing_scope", refused(t, base, "", http.StatusForbidden,
		withProtocols(realtime.Subprotocol, realtime.BearerProtocolPrefix+noScope)).Code)
}

// An API key receives an event only when its scopes include the event family's scope.
func TestEventsNeedTheFamilyScope(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.StartWorkers(t)
	acme := newTenant(t, env, "acme")
	audit := dial(t, env.Server.URL, acme.key(t, env, auth.RealtimeSubscribe|auth.ReadAuditLogs))
	bare := dial(t, env.Server.URL, acme.key(t, env, auth.RealtimeSubscribe|auth.ReadCampaigns))
	for _, c := range []*client{audit, bare} {
		require.Equal(t, "ack", c.subscribe(t, map[string]any{"topics": []string{acme.org()}}).Type)
	}
	acme.createRole(t, "Auditor")
	require.Equal(t, "role.created", audit.event(t).EventType)
	bare.quiet(t, 300*time.Millisecond)

	// Event filters narrow further: a family the key may read but did not ask for is not sent.
	require.Equal(t, "ack", audit.subscribe(t, map[string]any{"events": []string{"settings.*"}}).Type)
	acme.createRole(t, "Second")
	audit.quiet(t, 300*time.Millisecond)
	require.Equal(t, "error", audit.subscribe(t, map[string]any{"events": []string{"nope.*"}}).Type)
}

// A client that reconnects with last_event_id gets the events it missed once each, then live ones.
func TestResumeReplaysMissedEventsOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.StartWorkers(t)
	acme := newTenant(t, env, "acme")

	first := dial(t, env.Server.URL, acme.APIKey)
	require.Equal(t, "ack", first.subscribe(t, map[string]any{"topics": []string{acme.org()}, "events": []string{"role.*"}}).Type)
	acme.createRole(t, "One")
	seen := first.event(t)
	_ = first.ws.Close(websocket.StatusNormalClosure, "")

	missed := []uuid.UUID{acme.createRole(t, "Two"), acme.createRole(t, "Three")}
	waitDispatched(t, env, acme.OrganizationID)

	again := dial(t, env.Instance(t).URL, acme.APIKey) // any instance
	ack := again.subscribe(t, map[string]any{"request_id": "resume", "topics": []string{acme.org()},
		"events": []string{"role.*"}, "last_event_id": seen.ID.String()})
	require.Equal(t, "ack", ack.Type, "%+v", ack)
	require.NotNil(t, ack.Replayed)
	require.Equal(t, 2, *ack.Replayed)
	for _, want := range missed {
		ev := again.event(t)
		require.True(t, ev.Replay)
		require.Equal(t, want, roleID(t, ev))
	}
	live := acme.createRole(t, "Four")
	ev := again.event(t)
	require.False(t, ev.Replay)
	require.Equal(t, live, roleID(t, ev))
	again.quiet(t, 300*time.Millisecond)

	// last_event_id only in a connection's first subscribe frame.
	refusal := again.subscribe(t, map[string]any{"topics": []string{acme.org()}, "last_event_id": seen.ID.String()})
	require.Equal(t, "resume_not_allowed", refusal.Code)
}

// Resume is bounded: a cursor older than the window, or more missed events than the limit, asks for a resync.
func TestResumeBeyondTheBoundsAsksForResync(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	acme := newTenant(t, env, "acme")

	old := v7At(t, time.Now().Add(-25*time.Hour))
	c := dial(t, env.Server.URL, acme.APIKey)
	require.Equal(t, "ack", c.subscribe(t, map[string]any{"topics": []string{acme.org()}, "last_event_id": old.String()}).Type)
	require.Equal(t, "resync_required", c.next(t).Code)

	cursor := v7At(t, time.Now().Add(-time.Hour))
	rows := make([][]any, 1001)
	acks := make([][]any, len(rows))
	for i := range rows {
		rows[i] = []any{acme.OrganizationID, v7At(t, time.Now().Add(-30*time.Minute)), "contact.created", []byte(`{}`), time.Now()}
		acks[i] = []any{acme.OrganizationID, rows[i][1], realtime.ConsumerName}
	}
	owner := env.DB.OwnerPool(t)
	_, err := owner.CopyFrom(context.Background(), pgx.Identifier{"event_outbox"},
		[]string{"organization_id", "id", "event_type", "data", "dispatched_at"}, pgx.CopyFromRows(rows))
	require.NoError(t, err)
	_, err = owner.CopyFrom(context.Background(), pgx.Identifier{"event_consumer_acks"},
		[]string{"organization_id", "event_id", "consumer"}, pgx.CopyFromRows(acks))
	require.NoError(t, err)
	c = dial(t, env.Server.URL, acme.APIKey)
	require.Equal(t, "ack", c.subscribe(t, map[string]any{"topics": []string{acme.org()}, "last_event_id": cursor.String()}).Type)
	require.Equal(t, "resync_required", c.next(t).Code)

	c = dial(t, env.Server.URL, acme.APIKey)
	require.Equal(t, "invalid_last_event_id", c.subscribe(t, map[string]any{"topics": []string{acme.org()}, "last_event_id": uuid.NewString()}).Code)
}

// An event too large for a NOTIFY payload reaches clients through the fetch-by-id path, routed on the
// campaign and user ids of its data.
func TestLargeEventIsFetchedByID(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	env.StartWorkers(t)
	acme := newTenant(t, env, "acme")
	campaign := uuid.New()

	byCampaign := dial(t, env.Server.URL, acme.APIKey)
	require.Equal(t, "ack", byCampaign.subscribe(t, map[string]any{"topics": []string{"campaign:" + campaign.String()}}).Type)
	byUser := dial(t, env.Server.URL, acme.session)
	require.Equal(t, "ack", byUser.subscribe(t, map[string]any{"topics": []string{"user:" + acme.UserID.String()}}).Type)
	elsewhere := dial(t, env.Server.URL, acme.APIKey)
	require.Equal(t, "ack", elsewhere.subscribe(t, map[string]any{"topics": []string{"campaign:" + uuid.NewString()}}).Type)

	blob := strings.Repeat("z", 20000)
	inserter, err := river.NewClient(riverpgxv5.New(env.DB.Pool), &river.Config{})
	require.NoError(t, err)
	var id uuid.UUID
	err = db.WithOrgTx(context.Background(), env.DB.Pool, acme.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		id, err = events.NewOutbox(inserter).Emit(ctx, tx, events.ContactCreated,
			map[string]any{"campaign_id": campaign, "user_id": acme.UserID, "notes": blob})
		return err
	})
	require.NoError(t, err)
	for _, c := range []*client{byCampaign, byUser} {
		ev := c.event(t)
		require.Equal(t, id, ev.ID)
		var d struct {
			Notes string `json:"notes"`
		}
		require.NoError(t, json.Unmarshal(ev.Data, &d))
		require.Equal(t, blob, d.Notes)
	}
	elsewhere.quiet(t, 300*time.Millisecond)
}

// v7At is a uuid v7 of time at.
func v7At(t *testing.T, at time.Time) uuid.UUID {
	t.Helper()
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ms := uint64(at.UnixMilli())
	for i := range 6 {
		id[i] = byte(ms >> (40 - 8*i))
	}
	return id
}
