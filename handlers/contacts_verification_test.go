package handlers_test

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/eventing/events"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/testkit/verifytest"
)

// verificationPeers are the DNS and mail servers the built-in verifier of a test server asks.
type verificationPeers struct {
	dns  *verifytest.DNS
	smtp *verifytest.SMTP
}

// newVerificationEnv starts the API with its verifier pointed at in-process DNS and mail servers; probe
// turns the SMTP probe on.
func newVerificationEnv(t *testing.T, probe bool) (*apitest.Env, verificationPeers) {
	t.Helper()
	p := verificationPeers{dns: verifytest.NewDNS(t), smtp: verifytest.NewSMTP(t)}
	env := apitest.New(t, func(c *config.Config) {
		c.DNSServer = p.dns.Addr
		c.VerifySMTPProbe = probe
		c.VerifyProbeFrom = "probe@outflow.test"
		c.VerifySMTPPort = p.smtp.Port
		c.WebhooksAllowPrivate = true // the mail servers are on loopback
	})
	return env, p
}

// mailDomain gives domain an MX on the in-process mail server.
func (p verificationPeers) mailDomain(domain string) {
	p.dns.MX(domain, 10, "mx."+domain)
	p.dns.A("mx."+domain, "127.0.0.1")
}

// waitRun polls a run until it is finished.
func waitRun(t *testing.T, c *api.Client, id uuid.UUID) *api.ContactVerificationRun {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		run, err := c.ContactsVerificationGet(context.Background(), api.ContactsVerificationGetParams{ID: id})
		require.NoError(t, err)
		if run.Status == api.ContactVerificationRunStatusCompleted || run.Status == api.ContactVerificationRunStatusFailed {
			return run
		}
		require.True(t, time.Now().Before(deadline), "run %s still %s", id, run.Status)
		time.Sleep(50 * time.Millisecond)
	}
}

// contactsByEmail reads every contact of the organization through the search.
func contactsByEmail(t *testing.T, c *api.Client) map[string]api.Contact {
	t.Helper()
	out := map[string]api.Contact{}
	for _, ct := range searchContacts(t, c, api.ContactSearchRequest{}, api.ContactsSearchParams{Limit: api.NewOptString("100")}).Data {
		out[ct.Email] = ct
	}
	return out
}

func TestContactsVerificationRunWithProbe(t *testing.T) {
	t.Parallel()
	env, peers := newVerificationEnv(t, true)
	boot := env.Bootstrap(t, "Verify")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()

	peers.mailDomain("good.test")
	peers.mailDomain("any.test")
	peers.smtp.Accept("ada@good.test", "info@good.test")
	peers.smtp.CatchAll("any.test")

	overview, err := c.ContactsVerificationStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, "builtin", overview.Provider)
	require.True(t, overview.BuiltinReady)
	require.True(t, overview.ConnectionID.Set && overview.ConnectionID.Null)
	require.True(t, overview.Credits.Set && overview.Credits.Null)
	require.Equal(t, api.ContactVerificationCounts{}, overview.Counts, "no contacts yet")
	require.Empty(t, overview.Runs)

	created := createContacts(t, c,
		api.ContactCreate{Email: "ada@good.test"},
		api.ContactCreate{Email: "gone@good.test"},
		api.ContactCreate{Email: "info@good.test"},
		api.ContactCreate{Email: "bob@any.test"},
		api.ContactCreate{Email: "x@nomx.test"},
		api.ContactCreate{Email: "y@mailinator.com"},
		// An imported verdict the probe would contradict (the server refuses kept@good.test): kept.
		api.ContactCreate{Email: "kept@good.test", VerificationStatus: api.NewOptString("ok"), VerificationProvider: api.NewOptString("millionverifier")},
		api.ContactCreate{Email: "prov@good.test"},
	)
	orgExec(t, env, boot.OrganizationID, `UPDATE contacts SET verification_status = 'risky', verification_source = 'provider',
		verification_provider = 'zerobounce', verification_reason = 'From the provider' WHERE organization_id = $1 AND email = 'prov@good.test'`, boot.OrganizationID)
	ids := make([]uuid.UUID, len(created))
	for i, ct := range created {
		ids[i] = ct.ID
	}
	before := contactsByEmail(t, c)
	require.Equal(t, api.ContactVerificationSourceImported, before["kept@good.test"].VerificationSource.Value)

	overview, err = c.ContactsVerificationStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, api.ContactVerificationCounts{Valid: 1, Risky: 1, Unknown: 6, Pending: 6}, overview.Counts)

	run, err := c.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: ids}, api.ContactsVerificationStartParams{})
	require.NoError(t, err)
	require.Equal(t, api.ContactVerificationRunStatusQueued, run.Status)
	require.Equal(t, 8, run.Total)
	require.Zero(t, run.Processed)
	require.Equal(t, api.ContactVerificationCounts{Pending: 8}, run.Counts)
	require.Equal(t, "builtin", run.Provider.Value)
	require.True(t, run.StartedAt.Null && run.FinishedAt.Null)
	require.Equal(t, int64(1), orgInt(t, env, boot.OrganizationID,
		`SELECT count(*) FROM audit_log WHERE organization_id = $1 AND event = 'contact_verification.started' AND target_id = $2`,
		boot.OrganizationID, run.ID.String()))
	started := orgBulkEvents(t, env, boot.OrganizationID)
	require.Len(t, started, 1, "the run raises bulk_operation.started with its creation")
	require.Equal(t, "bulk_operation.started", started[0].Type)
	require.Equal(t, run.ID, started[0].Data.OperationID, "the run id names the operation (realtime topic bulk:<run id>)")
	require.Equal(t, events.BulkContactsVerification, started[0].Data.Operation)
	require.Equal(t, int64(8), started[0].Data.Total)

	env.StartWorkers(t)
	done := waitRun(t, c, run.ID)
	require.Equal(t, api.ContactVerificationRunStatusCompleted, done.Status, done.Error.Value)
	require.Equal(t, 8, done.Total)
	require.Equal(t, 8, done.Processed)
	// valid: ada and the kept import; risky: info (role), bob (catch-all), the kept provider verdict;
	// invalid: gone (550), nomx, mailinator.
	require.Equal(t, api.ContactVerificationCounts{Valid: 2, Risky: 3, Invalid: 3}, done.Counts)
	require.False(t, done.StartedAt.Null)
	require.False(t, done.FinishedAt.Null)
	require.Empty(t, done.Error.Value)
	finished := orgBulkEvents(t, env, boot.OrganizationID)
	require.Len(t, finished, 2)
	require.Equal(t, "bulk_operation.completed", finished[1].Type)
	require.Equal(t, run.ID, finished[1].Data.OperationID)
	require.Equal(t, [3]int64{8, 8, 0}, [3]int64{finished[1].Data.Total, finished[1].Data.Succeeded, finished[1].Data.Failed})

	after := contactsByEmail(t, c)
	type verdict struct {
		status     api.ContactVerificationStatus
		sub        string
		confidence int
		catchAll   bool
	}
	for email, want := range map[string]verdict{
		"ada@good.test":    {api.ContactVerificationStatusValid, "", 95, false},
		"gone@good.test":   {api.ContactVerificationStatusInvalid, "", 90, false},
		"info@good.test":   {api.ContactVerificationStatusRisky, "role", 90, false},
		"bob@any.test":     {api.ContactVerificationStatusRisky, "catch_all", 50, true},
		"x@nomx.test":      {api.ContactVerificationStatusInvalid, "no_mx", 95, false},
		"y@mailinator.com": {api.ContactVerificationStatusInvalid, "disposable", 95, false},
	} {
		got := after[email]
		require.Equal(t, want.status, got.VerificationStatus, email)
		require.Equal(t, want.sub, string(got.VerificationSubStatus.Value), email)
		require.Equal(t, want.confidence, got.VerificationConfidence.Value, email)
		require.Equal(t, want.catchAll, got.IsCatchAll, email)
		require.Equal(t, api.ContactVerificationSourceProbe, got.VerificationSource.Value, email)
		require.Equal(t, "builtin", got.VerificationProvider.Value, email)
		require.NotEmpty(t, got.VerificationReason, email)
		require.False(t, got.VerificationCheckedAt.Null, email)
	}
	require.Contains(t, after["gone@good.test"].VerificationReason, "550")
	for _, email := range []string{"kept@good.test", "prov@good.test"} {
		require.Equal(t, before[email].VerificationStatus, after[email].VerificationStatus, email)
		require.Equal(t, before[email].VerificationSource, after[email].VerificationSource, email)
		require.Equal(t, before[email].VerificationProvider, after[email].VerificationProvider, email)
		require.Equal(t, before[email].VerificationReason, after[email].VerificationReason, email)
	}
	require.NotContains(t, peers.smtp.Rcpts(), "kept@good.test", "a kept verdict is not even probed")
	require.Equal(t, "probe@outflow.test", peers.smtp.Mails()[0])

	overview, err = c.ContactsVerificationStatus(ctx)
	require.NoError(t, err)
	require.Equal(t, api.ContactVerificationCounts{Valid: 2, Risky: 3, Invalid: 3}, overview.Counts)
	require.Len(t, overview.Runs, 1)
	require.Equal(t, run.ID, overview.Runs[0].ID)
	require.Equal(t, done.Counts, overview.Runs[0].Counts)
}

func TestContactsVerificationFilterSelectionWithoutProbe(t *testing.T) {
	t.Parallel()
	env, peers := newVerificationEnv(t, false)
	boot := env.Bootstrap(t, "Verify")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()
	peers.mailDomain("good.test")
	createContacts(t, c, api.ContactCreate{Email: "ada@good.test"}, api.ContactCreate{Email: "sales@good.test"},
		api.ContactCreate{Email: "ada@other.test"})
	env.StartWorkers(t)

	sel := &api.ContactSelection{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("good.test")})}
	run, err := c.ContactsVerificationStart(ctx, sel, api.ContactsVerificationStartParams{})
	require.NoError(t, err)
	require.Equal(t, 2, run.Total, "only the contacts the filters match")
	done := waitRun(t, c, run.ID)
	require.Equal(t, api.ContactVerificationRunStatusCompleted, done.Status)
	require.Equal(t, api.ContactVerificationCounts{Valid: 1, Risky: 1}, done.Counts)

	after := contactsByEmail(t, c)
	require.Equal(t, api.ContactVerificationStatusValid, after["ada@good.test"].VerificationStatus)
	require.Equal(t, 70, after["ada@good.test"].VerificationConfidence.Value, "not probed: a deliverable domain only")
	require.Contains(t, after["ada@good.test"].VerificationReason, "not probed")
	require.Equal(t, "role", string(after["sales@good.test"].VerificationSubStatus.Value))
	require.Equal(t, api.ContactVerificationStatusUnknown, after["ada@other.test"].VerificationStatus, "not selected")
	require.False(t, after["ada@other.test"].VerificationSource.Set && after["ada@other.test"].VerificationSource.Value != "")
	require.Zero(t, peers.smtp.Sessions(), "the probe is off")
}

func TestContactsVerificationOverlappingRuns(t *testing.T) {
	t.Parallel()
	env, peers := newVerificationEnv(t, false)
	boot := env.Bootstrap(t, "Verify")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()
	peers.mailDomain("good.test")
	cs := createContacts(t, c, api.ContactCreate{Email: "ada@good.test"}, api.ContactCreate{Email: "bob@good.test"})

	first, err := c.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID}}, api.ContactsVerificationStartParams{})
	require.NoError(t, err)
	second, err := c.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID, cs[1].ID}}, api.ContactsVerificationStartParams{})
	require.NoError(t, err)
	require.Equal(t, 1, second.Total, "ada waits in the first run and is left out of the second")
	third, err := c.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{cs[1].ID}}, api.ContactsVerificationStartParams{})
	require.NoError(t, err)
	require.Zero(t, third.Total, "everything selected is already queued")

	overview, err := c.ContactsVerificationStatus(ctx)
	require.NoError(t, err)
	require.Len(t, overview.Runs, 3)
	require.Equal(t, []uuid.UUID{third.ID, second.ID, first.ID}, []uuid.UUID{overview.Runs[0].ID, overview.Runs[1].ID, overview.Runs[2].ID})

	env.StartWorkers(t)
	for _, r := range []*api.ContactVerificationRun{first, second, third} {
		done := waitRun(t, c, r.ID)
		require.Equal(t, api.ContactVerificationRunStatusCompleted, done.Status)
		require.Equal(t, r.Total, done.Processed)
		require.Equal(t, r.Total, done.Counts.Valid)
	}

	// A finished run no longer holds its contacts: a new run takes them again. Running runs list first.
	fourth, err := c.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID}}, api.ContactsVerificationStartParams{})
	require.NoError(t, err)
	require.Equal(t, 1, fourth.Total)
	overview, err = c.ContactsVerificationStatus(ctx)
	require.NoError(t, err)
	require.Len(t, overview.Runs, 4)
	if overview.Runs[0].Status != api.ContactVerificationRunStatusCompleted { // the worker may already be done
		require.Equal(t, fourth.ID, overview.Runs[0].ID)
	}
	waitRun(t, c, fourth.ID)
}

func TestContactsVerificationErrors(t *testing.T) {
	t.Parallel()
	env, _ := newVerificationEnv(t, false)
	boot := env.Bootstrap(t, "Verify")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()
	cs := createContacts(t, c, api.ContactCreate{Email: "ada@good.test"})

	_, err := c.ContactsVerificationGet(ctx, api.ContactsVerificationGetParams{ID: uuid.New()})
	requireAPIError(t, err, http.StatusNotFound, "verification_run_not_found")

	_, err = c.ContactsVerificationStart(ctx, &api.ContactSelection{}, api.ContactsVerificationStartParams{})
	requireAPIError(t, err, http.StatusBadRequest, "invalid_selection")
	_, err = c.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{uuid.New()}}, api.ContactsVerificationStartParams{})
	requireAPIError(t, err, http.StatusBadRequest, "empty_selection")
	_, err = c.ContactsVerificationStart(ctx, &api.ContactSelection{All: api.NewOptBool(true),
		Filters: api.NewOptContactSearchRequest(api.ContactSearchRequest{Query: api.NewOptString("nobody-matches-this")})}, api.ContactsVerificationStartParams{})
	requireAPIError(t, err, http.StatusBadRequest, "empty_selection")

	// Scopes: reading needs READ_CONTACTS, starting BULK_CONTACTS.
	reader := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.ReadContacts))
	_, err = reader.ContactsVerificationStatus(ctx)
	require.NoError(t, err)
	_, err = reader.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID}}, api.ContactsVerificationStartParams{})
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")
	writer := env.Client(t, scopedKey(t, env, boot.OrganizationID, auth.WriteContacts))
	_, err = writer.ContactsVerificationStatus(ctx)
	requireAPIError(t, err, http.StatusForbidden, "missing_scope")

	// Another organization's run is unknown.
	run, err := c.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID}}, api.ContactsVerificationStartParams{})
	require.NoError(t, err)
	other := env.Client(t, env.Bootstrap(t, "Other").APIKey)
	_, err = other.ContactsVerificationGet(ctx, api.ContactsVerificationGetParams{ID: run.ID})
	requireAPIError(t, err, http.StatusNotFound, "verification_run_not_found")
	overview, err := other.ContactsVerificationStatus(ctx)
	require.NoError(t, err)
	require.Empty(t, overview.Runs)
	_, err = other.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID}}, api.ContactsVerificationStartParams{})
	requireAPIError(t, err, http.StatusBadRequest, "empty_selection")
}

func TestContactsVerificationUnavailableWithoutDNS(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	silent := pc.LocalAddr().String()
	require.NoError(t, pc.Close()) // no DNS server answers there
	env := apitest.New(t, func(c *config.Config) { c.DNSServer = silent })
	boot := env.Bootstrap(t, "Verify")
	c := env.Client(t, boot.APIKey)
	ctx := context.Background()
	cs := createContacts(t, c, api.ContactCreate{Email: "ada@good.test"})

	overview, err := c.ContactsVerificationStatus(ctx)
	require.NoError(t, err)
	require.False(t, overview.BuiltinReady)
	_, err = c.ContactsVerificationStart(ctx, &api.ContactSelection{Contacts: []uuid.UUID{cs[0].ID}}, api.ContactsVerificationStartParams{})
	requireAPIError(t, err, http.StatusServiceUnavailable, "verifier_unavailable")
	require.Zero(t, orgInt(t, env, boot.OrganizationID, `SELECT count(*) FROM verification_runs WHERE organization_id = $1`, boot.OrganizationID))
}
