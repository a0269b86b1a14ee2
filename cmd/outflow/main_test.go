package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestVersionAndUsage(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"version"}, envOf(nil), &out, io.Discard))
	require.Contains(t, out.String(), "outflow dev (go1.")

	require.EqualError(t, run(context.Background(), nil, envOf(nil), io.Discard, io.Discard), "no command given")
	require.ErrorContains(t, run(context.Background(), []string{"fly"}, envOf(map[string]string{"DATABASE_URL": "postgres://x/y"}), io.Discard, io.Discard), `unknown command "fly"`)
}

func TestConfigurationErrorsStopStartup(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), []string{"serve"}, envOf(map[string]string{"OUTFLOW_HTTP_ADDR": "nope"}), io.Discard, io.Discard)
	require.ErrorContains(t, err, "DATABASE_URL is required")
	require.ErrorContains(t, err, `OUTFLOW_HTTP_ADDR "nope" must be host:port`)

	err = run(context.Background(), []string{"serve"}, envOf(map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x"}), io.Discard, io.Discard)
	require.ErrorContains(t, err, "OUTFLOW_SECRET_KEY is required")

	err = run(context.Background(), []string{"serve", "--role", "cron"}, envOf(map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/x"}), io.Discard, io.Discard)
	require.ErrorContains(t, err, `--role "cron" must be api, worker or all`)
}

func TestAdminBootstrapPrintsOneJSONObject(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	env := envOf(map[string]string{"DATABASE_URL": d.URL, "OUTFLOW_LOG_LEVEL": "error"})
	var out bytes.Buffer
	args := []string{"admin", "bootstrap", "--email", "ops@acme.example", "--password", "correct horse battery staple", "--org", "Acme"}
	require.NoError(t, run(context.Background(), args, env, &out, io.Discard))

	var res map[string]string
	dec := json.NewDecoder(&out)
	require.NoError(t, dec.Decode(&res))
	require.False(t, dec.More(), "exactly one JSON object")
	require.Len(t, res, 4)
	require.NotEmpty(t, res["api_key_id"])
	require.NotEmpty(t, res["user_id"])
	require.NotEmpty(t, res["organization_id"])
	require.True(t, strings.HasPrefix(res["api_key"], "ofk_"))

	require.ErrorContains(t, run(context.Background(), []string{"admin", "bootstrap", "--email", "x@y.example"}, env, io.Discard, io.Discard),
		"--email, --password and --org are all required")
}

// TestGracefulShutdown cancels a running server while a request is in flight: the request still completes,
// then serve returns cleanly and the port is closed.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	cfg, err := config.Load(envOf(map[string]string{
		"DATABASE_URL":             d.URL,
		"OUTFLOW_HTTP_ADDR":        "127.0.0.1:0",
		"OUTFLOW_SECRET_KEY":       strings.Repeat("ab", 32),
		"OUTFLOW_SHUTDOWN_TIMEOUT": "10s",
	}))
	require.NoError(t, err)
	var boot bytes.Buffer
	require.NoError(t, run(ctx, []string{"admin", "bootstrap", "--email", "a@acme.example", "--password", "correct horse battery staple", "--org", "Acme"},
		envOf(map[string]string{"DATABASE_URL": d.URL, "OUTFLOW_LOG_LEVEL": "error"}), &boot, io.Discard))
	var creds struct {
		APIKey string `json:"api_key"`
	}
	require.NoError(t, json.Unmarshal(boot.Bytes(), &creds))

	serveCtx, stop := context.WithCancel(ctx)
	addrCh := make(chan net.Addr, 1)
	done := make(chan error, 1)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	go func() { done <- serve(serveCtx, cfg, roleAll, logger, func(a net.Addr) { addrCh <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrCh:
	case err := <-done:
		t.Fatalf("serve ended early: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}

	// Hold a lock that readiness needs, so its request stays in flight across the shutdown signal.
	owner, err := pgx.Connect(ctx, d.URL)
	require.NoError(t, err)
	defer owner.Close(ctx)
	tx, err := owner.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)

	type response struct {
		status int
		err    error
	}
	inFlight := make(chan response, 1)
	go func() {
		req, _ := http.NewRequest("GET", "http://"+addr.String()+"/v1/system/readiness", nil)
		req.Header.Set("Authorization", "Bearer "+creds.APIKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			inFlight <- response{err: err}
			return
		}
		resp.Body.Close()
		inFlight <- response{status: resp.StatusCode}
	}()
	// Poll from another connection: inside the locking transaction pg_stat_activity is one frozen snapshot.
	observer := d.OwnerPool(t)
	require.Eventually(t, func() bool {
		var waiting int
		_ = observer.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%schema_migrations%'").Scan(&waiting)
		return waiting > 0
	}, 10*time.Second, 20*time.Millisecond, "the readiness request should be waiting on the lock")

	stop()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("serve returned before the in-flight request finished: %v", err)
	default:
	}
	require.NoError(t, tx.Rollback(ctx))

	r := <-inFlight
	require.NoError(t, r.err)
	require.Equal(t, http.StatusOK, r.status, "the in-flight request completes during shutdown")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not return after shutdown")
	}
	_, err = net.DialTimeout("tcp", addr.String(), time.Second)
	require.Error(t, err, "the listener is closed")
}

func TestAdminRollupsRebuildRecomputesEveryOrganizationOrTheOneNamed(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	ctx := context.Background()
	env := envOf(map[string]string{"DATABASE_URL": d.URL, "OUTFLOW_LOG_LEVEL": "error"})
	orgOf := func(name string) string {
		var out bytes.Buffer
		require.NoError(t, run(ctx, []string{"admin", "bootstrap", "--email", "ops@" + name + ".example", "--password",
			"correct horse battery staple", "--org", name}, env, &out, io.Discard))
		var res map[string]string
		require.NoError(t, json.NewDecoder(&out).Decode(&res))
		return res["organization_id"]
	}
	acme, globex := orgOf("Acme"), orgOf("Globex")
	owner := d.OwnerPool(t)
	exec := func(sql string, args ...any) {
		_, err := owner.Exec(ctx, sql, args...)
		require.NoError(t, err)
	}
	// Acme sent one direct message; Globex's counters are stale (nothing it sent explains them).
	exec(`INSERT INTO send_tasks (organization_id, id, kind, status, to_email, sent_at)
		VALUES ($1, gen_random_uuid(), 'direct', 'sent', 'bob@example.net', '2026-03-01T10:00:00Z')`, acme)
	exec(`INSERT INTO analytics_org_days (organization_id, day, kind, sent) VALUES ($1, '2026-03-01', 'direct', 99)`, globex)
	// Acme's engagement row is stale too: no tracked event of its campaign explains it.
	exec(`INSERT INTO campaigns (organization_id, id, name) VALUES ($1, '00000000-0000-0000-0000-00000000000c', 'Launch')`, acme)
	exec(`INSERT INTO analytics_engagement (organization_id, campaign_id, dimension, key, contact_id)
		VALUES ($1, '00000000-0000-0000-0000-00000000000c', 'country', 'FR', gen_random_uuid())`, acme)
	engaged := func(org string) (n int) {
		require.NoError(t, owner.QueryRow(ctx, `SELECT count(*) FROM analytics_engagement WHERE organization_id = $1`, org).Scan(&n))
		return n
	}
	sent := func(org string) (days []string) {
		rows, err := owner.Query(ctx, `SELECT day::text || ' ' || kind || ' ' || sent FROM analytics_org_days
			WHERE organization_id = $1 ORDER BY day, kind`, org)
		require.NoError(t, err)
		days, err = pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return days
	}

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"admin", "rollups", "rebuild", "--org", acme}, env, &out, io.Discard))
	require.Equal(t, "rebuilt the rollups of organization "+acme+" (Acme)\n1 organization(s) rebuilt\n", out.String())
	require.Equal(t, []string{"2026-03-01 direct 1"}, sent(acme))
	require.Zero(t, engaged(acme), "the engagement rows are rebuilt with the counters")
	require.Equal(t, []string{"2026-03-01 direct 99"}, sent(globex), "only the organization named")

	out.Reset()
	require.NoError(t, run(ctx, []string{"admin", "rollups", "rebuild"}, env, &out, io.Discard))
	require.Contains(t, out.String(), "(Globex)\n")
	require.Contains(t, out.String(), "2 organization(s) rebuilt\n")
	require.Equal(t, []string{"2026-03-01 direct 1"}, sent(acme))
	require.Empty(t, sent(globex), "the stale counters are gone")

	require.ErrorContains(t, run(ctx, []string{"admin", "rollups", "rebuild", "--org", "acme"}, env, io.Discard, io.Discard),
		`--org must be an organization id (a UUID), not "acme"`)
	require.ErrorContains(t, run(ctx, []string{"admin", "rollups", "rebuild", "--org", "00000000-0000-0000-0000-000000000001"}, env,
		io.Discard, io.Discard), "no organization has the id 00000000-0000-0000-0000-000000000001")
}
