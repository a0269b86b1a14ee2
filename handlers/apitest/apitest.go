// Package apitest runs the real HTTP stack (app.New over a per-test database, as `outflow serve` builds it) behind httptest and hands
// out generated-SDK clients, one per credential, so API tests exercise exactly what production serves.
package apitest

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/outflowhq/outflow/cmd/outflow/app"
	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/sysmail"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/internal/trail/usage"
)

// Env is one test's running API.
type Env struct {
	// DB is the test's own database.
	DB *dbtest.DB
	// Server serves the full handler; its URL is the deployment root (the API is under /v1).
	Server *httptest.Server
	// Mail holds every system message the server sent.
	Mail *Mailbox
	// Config is the configuration the server runs with.
	Config config.Config
	// Usage is the server's API-key request recorder; Flush it before reading usage logs.
	Usage *usage.Recorder
	// Tracking is the server's tracking event writer; Flush it before reading tracking_events.
	Tracking *tracking.Batcher
	// Clock is the clock the tracking endpoints stamp opens and clicks with: real time until a test sets it.
	Clock *Clock
}

// Parts replace pieces of the process a test needs to control; the zero value keeps production's.
type Parts struct {
	// Networks replaces the embedded scanner, probable-scanner and privacy-proxy lists (tracking.ParseNetworks),
	// so a test can make its own loopback addresses a scanner's.
	Networks *tracking.Networks
	// AppsTLS is what the calls to customer apps trust (an httptest TLS server's client configuration), so a
	// connection test can reach the test's own HTTPS app (with AllowPrivateWebhooks for its loopback address).
	AppsTLS *tls.Config
}

// Clock reads real time until Set stops it at a given instant.
type Clock struct {
	mu    sync.Mutex
	fixed time.Time
}

// Now is the fixed instant, or the real time when none is set.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fixed.IsZero() {
		return time.Now()
	}
	return c.fixed
}

// Set stops the clock at at; the zero time lets it follow real time again.
func (c *Clock) Set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fixed = at
}

// Option adjusts the test server's configuration before it starts.
type Option func(*config.Config)

// AllowPrivateWebhooks lets webhook URLs point at the test's own loopback receivers (httptest servers on
// 127.0.0.1, plain http, any port), as OUTFLOW_WEBHOOKS_ALLOW_PRIVATE=1 does for self-hosted rigs. Without it
// the server refuses such URLs, as production does.
func AllowPrivateWebhooks() Option {
	return func(c *config.Config) { c.WebhooksAllowPrivate = true }
}

// MailPeers lets the server's mailboxes reach the test's in-process SMTP and IMAP servers: it trusts the
// certificate authority in caFile (mailtest.CAFile) and allows loopback mail hosts, as
// OUTFLOW_MAIL_CA_FILE and OUTFLOW_ALLOW_INSECURE_MAIL=1 do for a self-hosted rig.
func MailPeers(caFile string) Option {
	return func(c *config.Config) {
		c.MailCAFile = caFile
		c.AllowInsecureMail = true
	}
}

// New starts the API over a fresh database and stops it when t ends. The configuration is the development
// default (captcha off, email verification on) unless options change it.
func New(t testing.TB, opts ...Option) *Env {
	t.Helper()
	return NewWith(t, Parts{}, opts...)
}

// NewWith is New with parts of the process replaced.
func NewWith(t testing.TB, parts Parts, opts ...Option) *Env {
	t.Helper()
	d := dbtest.New(t)
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "DATABASE_URL":
			return d.URL
		case "OUTFLOW_SECRET_KEY":
			return strings.Repeat("5e", 32)
		}
		return ""
	})
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	cfg.MaxBodyBytes = 10 << 20 // the production default
	for _, o := range opts {
		o(&cfg)
	}
	box, clock := &Mailbox{}, &Clock{}
	a := build(t, cfg, app.Options{API: true, Pool: d.Pool, Mail: box, Now: clock.Now, Networks: parts.Networks,
		AppsTLS: parts.AppsTLS})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	return &Env{DB: d, Server: srv, Mail: box, Config: cfg, Usage: a.Usage, Tracking: a.Tracking, Clock: clock}
}

// build builds an app as `outflow serve` does and closes it when t ends (after a server registered later has
// stopped, and before the database goes).
func build(t testing.TB, cfg config.Config, opts app.Options) *app.App {
	t.Helper()
	a, err := app.New(context.Background(), cfg, logger(), opts)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.Close(ctx)
	})
	return a
}

// Instance starts another server process's worth of API over the same database: its own pool, its own
// in-memory state, as a second `outflow serve` behind a load balancer would have. Tests of what must hold
// across instances (rate limits, idempotency) call both.
func (e *Env) Instance(t testing.TB) *httptest.Server {
	t.Helper()
	cfg := e.Config
	cfg.DBMaxConns = 10
	srv := httptest.NewServer(build(t, cfg, app.Options{API: true, Mail: e.Mail}).Handler)
	t.Cleanup(srv.Close)
	return srv
}

// StartWorkers runs a worker process over the test's database (every worker and event consumer `outflow
// serve` runs), stopped when t ends; tests of background work (event dispatch, webhook deliveries) call it.
// Each call is one more worker process.
func (e *Env) StartWorkers(t testing.TB) *river.Client[pgx.Tx] {
	t.Helper()
	a := build(t, e.Config, app.Options{Work: true, Pool: e.DB.Pool, Mail: e.Mail})
	if err := a.Start(context.Background()); err != nil {
		t.Fatalf("apitest: start workers: %v", err)
	}
	return a.Workers
}

// Mailbox records system mail instead of sending it.
type Mailbox struct {
	mu   sync.Mutex
	sent []sysmail.Message
}

// Send records m.
func (b *Mailbox) Send(_ context.Context, m sysmail.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sent = append(b.sent, m)
	return nil
}

// To returns the messages sent to address, oldest first.
func (b *Mailbox) To(address string) []sysmail.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []sysmail.Message
	for _, m := range b.sent {
		if strings.EqualFold(m.To, address) {
			out = append(out, m)
		}
	}
	return out
}

var codeRe = regexp.MustCompile(`\b(\d{6})\b`)

// LastCode returns the 6-digit code of the newest message to address, failing t when there is none.
func (b *Mailbox) LastCode(t testing.TB, address string) string {
	t.Helper()
	msgs := b.To(address)
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := codeRe.FindStringSubmatch(msgs[i].Text); m != nil {
			return m[1]
		}
	}
	t.Fatalf("apitest: no code mailed to %s", address)
	return ""
}

// Bootstrap creates an owner, an organization named org and a full-access API key, as `outflow admin
// bootstrap` does. The key gets the highest per-minute budget, so tests that walk many operations are not
// throttled; tests of rate limits make keys of their own.
func (e *Env) Bootstrap(t testing.TB, org string) accounts.BootstrapResult {
	t.Helper()
	ctx := context.Background()
	res, err := accounts.Bootstrap(ctx, e.DB.Pool, "owner@"+org+".example", "correct horse battery staple", org)
	if err != nil {
		t.Fatalf("apitest: bootstrap: %v", err)
	}
	err = db.WithOrgTx(ctx, e.DB.Pool, res.OrganizationID, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE api_keys SET rate_limit_per_minute = $1 WHERE organization_id = $2 AND id = $3",
			auth.MaxRateLimitPerMinute, res.OrganizationID, res.APIKeyID)
		return err
	})
	if err != nil {
		t.Fatalf("apitest: bootstrap: %v", err)
	}
	return res
}

// Client returns a generated-SDK client that sends token as its bearer credential ("" sends none).
func (e *Env) Client(t testing.TB, token string) *api.Client {
	t.Helper()
	// Redirects are answers the contract declares (302 with Location): the SDK sees them instead of following.
	hc := *e.Server.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c, err := api.NewClient(e.Server.URL+app.APIPrefix, bearer(token), api.WithClient(&hc))
	if err != nil {
		t.Fatalf("apitest: client: %v", err)
	}
	return c
}

// Do sends a raw request to path (relative to the deployment root) for tests of what the SDK cannot send.
func (e *Env) Do(t testing.TB, method, path, token string, body io.Reader, header http.Header) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+path, body)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type bearer string

func (b bearer) BearerAuth(context.Context, api.OperationName) (api.BearerAuth, error) {
	return api.BearerAuth{Token: string(b)}, nil
}

// Password is the password SignUp uses.
const Password = "correct horse battery staple"

// SignUp registers email through the public API (register, emailed code, confirm) and signs in (login,
// emailed code, confirm), returning the session's tokens.
func (e *Env) SignUp(t testing.TB, email string) *api.TokenPair {
	t.Helper()
	ctx := context.Background()
	public := e.Client(t, "")
	reg, err := public.AuthRegisterStart(ctx, &api.AuthCredentials{Email: email, Password: Password})
	if err != nil {
		t.Fatalf("apitest: register: %v", err)
	}
	if err := public.AuthRegisterConfirm(ctx, &api.ConfirmRequest{Session: reg.Session.Value, Code: e.Mail.LastCode(t, email)}); err != nil {
		t.Fatalf("apitest: register confirm: %v", err)
	}
	return e.SignIn(t, email, Password)
}

// SignIn completes a password sign-in (login, emailed code, confirm) for an account without 2FA.
func (e *Env) SignIn(t testing.TB, email, password string) *api.TokenPair {
	t.Helper()
	ctx := context.Background()
	public := e.Client(t, "")
	login, err := public.AuthLoginStart(ctx, &api.AuthCredentials{Email: email, Password: password})
	if err != nil {
		t.Fatalf("apitest: login: %v", err)
	}
	res, err := public.AuthLoginConfirm(ctx, &api.ConfirmRequest{Session: login.Session, Code: e.Mail.LastCode(t, email)})
	if err != nil {
		t.Fatalf("apitest: login confirm: %v", err)
	}
	if !res.AccessToken.Set {
		t.Fatalf("apitest: login answered a 2FA challenge; use the 2FA flow")
	}
	return &api.TokenPair{AccessToken: res.AccessToken.Value, AccessTokenExpiresAt: res.AccessTokenExpiresAt.Value,
		RefreshToken: res.RefreshToken.Value, RefreshTokenExpiresAt: res.RefreshTokenExpiresAt.Value}
}

// Owner signs in the owner Bootstrap(t, org) created and returns a client of that session: a person, whom
// the agent policy gate never holds (an API key starting a campaign needs a policy).
func (e *Env) Owner(t testing.TB, org string) *api.Client {
	t.Helper()
	return e.Client(t, e.SignIn(t, "owner@"+org+".example", Password).AccessToken)
}

// logger is the log of the servers and workers a test starts: discarded, or on stderr when
// OUTFLOW_TEST_LOG=1 (to see why a request answered 500).
func logger() *slog.Logger {
	if os.Getenv("OUTFLOW_TEST_LOG") == "1" {
		return slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewJSONHandler(io.Discard, nil))
}

// MailService names an in-process mail server (mailtest's, listening on 127.0.0.1) as a connect body's smtp or
// imap object: host localhost (the name its certificate carries), STARTTLS, and the given login.
func MailService(t testing.TB, addr, user, pass string) api.MailService {
	t.Helper()
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	return api.MailService{Host: "localhost", Port: port, Username: user, Password: pass,
		Security: api.NewOptMailServiceSecurity(api.MailServiceSecurityStarttls)}
}
