package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/testkit/verifytest"
)

// dnsRig is a mail rig whose server resolves through an in-process DNS server and has a tracking host.
func dnsRig(t *testing.T) (*mailRig, *verifytest.DNS) {
	t.Helper()
	d := verifytest.NewDNS(t)
	r := newMailRig(t, func(c *config.Config) {
		c.DNSServer = d.Addr
		c.TrackingHost = "t.outflow.dev"
	})
	d.A("t.outflow.dev", "198.51.100.10")
	return r, d
}

func TestMailboxTrackingDomain(t *testing.T) {
	t.Parallel()
	r, d := dnsRig(t)
	ctx := context.Background()
	m := r.connect(t, "ada@acme.io")
	track := func(domain string) *api.MailboxTrackingDomainState {
		t.Helper()
		st, err := r.c.MailboxesUpdateTrackingDomain(ctx, api.MailboxesUpdateTrackingDomainParams{ID: m.ID, Domain: api.NewOptString(domain)})
		require.NoError(t, err)
		return st
	}

	st, err := r.c.MailboxesGetTrackingDomain(ctx, api.MailboxesGetTrackingDomainParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxTrackingDomainStateStatusUnset, st.Status)
	require.Equal(t, "t.outflow.dev", st.CnameTarget)

	for _, bad := range []string{"203.0.113.7", "track.acme.io:8443", "localhost", "intranet"} {
		_, err := r.c.MailboxesUpdateTrackingDomain(ctx, api.MailboxesUpdateTrackingDomainParams{ID: m.ID, Domain: api.NewOptString(bad)})
		requireAPIError(t, err, 400, "invalid_tracking_domain")
	}

	// Not published yet: an unverified state with a reason, not an error.
	st = track("https://Track.Acme.io/")
	require.Equal(t, "track.acme.io", st.TrackingDomain)
	require.Equal(t, api.MailboxTrackingDomainStateStatusNotFound, st.Status)
	require.False(t, st.TrackingDomainVerified)
	require.NotEmpty(t, st.Message)

	d.CNAME("track.acme.io", "elsewhere.example.net")
	st, err = r.c.MailboxesVerifyTrackingDomain(ctx, api.MailboxesVerifyTrackingDomainParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxTrackingDomainStateStatusWrongTarget, st.Status)
	require.Equal(t, "elsewhere.example.net", st.Observed.Value)

	d.CNAME("track.acme.io", "t.outflow.dev")
	st, err = r.c.MailboxesVerifyTrackingDomain(ctx, api.MailboxesVerifyTrackingDomainParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxTrackingDomainStateStatusVerified, st.Status)
	require.True(t, st.TrackingDomainVerified)
	verifiedAt := st.TrackingDomainVerifiedAt.Value
	got, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, got.TrackingDomainVerified.Value)
	require.Equal(t, "track.acme.io", got.TrackingDomain.Value)

	// A resolver failure never revokes a verified domain.
	d.ServFail("track.acme.io")
	st, err = r.c.MailboxesVerifyTrackingDomain(ctx, api.MailboxesVerifyTrackingDomainParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxTrackingDomainStateStatusLookupError, st.Status)
	require.True(t, st.TrackingDomainVerified)
	require.True(t, verifiedAt.Equal(st.TrackingDomainVerifiedAt.Value))
	// The GET is stored state only: no DNS question is asked.
	asked := len(d.Queries())
	st, err = r.c.MailboxesGetTrackingDomain(ctx, api.MailboxesGetTrackingDomainParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, asked, len(d.Queries()))
	require.True(t, st.TrackingDomainVerified)

	// Clearing it: unset, unverified.
	st = track("")
	require.Equal(t, api.MailboxTrackingDomainStateStatusUnset, st.Status)
	require.False(t, st.TrackingDomainVerified)
	require.Empty(t, st.TrackingDomain)
	_, err = r.c.MailboxesGetTrackingDomain(ctx, api.MailboxesGetTrackingDomainParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
}

func TestMailboxAuthCheckAndDailyState(t *testing.T) {
	t.Parallel()
	r, d := dnsRig(t)
	ctx := context.Background()
	d.TXT("acme.io", "v=spf1 include:_spf.google.com ~all")
	d.TXT("_dmarc.acme.io", "v=DMARC1; p=reject")
	d.TXT("google._domainkey.acme.io", "v=DKIM1; k=rsa; p=MIIB")
	d.TXT("halfway.dev", "v=spf1 -all")
	good := r.connect(t, "ada@acme.io")
	half := r.connect(t, "bob@halfway.dev")

	res, err := r.c.MailboxesAuthCheck(ctx, api.MailboxesAuthCheckParams{ID: good.ID})
	require.NoError(t, err)
	require.Equal(t, "acme.io", res.Domain)
	require.True(t, res.SpfFound)
	require.Equal(t, "v=spf1 include:_spf.google.com ~all", res.SpfRecord.Value)
	require.Equal(t, api.MailboxAuthCheckDkimStatusFound, res.DkimStatus)
	require.Equal(t, []string{"google"}, res.DkimSelectors)
	require.Equal(t, "reject", res.DmarcPolicy.Value)
	require.True(t, res.AllAligned)
	res, err = r.c.MailboxesAuthCheck(ctx, api.MailboxesAuthCheckParams{ID: half.ID})
	require.NoError(t, err)
	require.False(t, res.DmarcFound)
	require.False(t, res.DmarcPolicy.Set, "omitted when not found")
	require.Equal(t, api.MailboxAuthCheckDkimStatusUndetermined, res.DkimStatus)
	m, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: half.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxAuthStateUnknown, m.AuthState.Value, "the check is read-only")

	// The daily check (run by the workers at start) stores the state of each mailbox, one after the other; a
	// failing domain starts its grace period.
	r.env.StartWorkers(t)
	require.Eventually(t, func() bool {
		m, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: half.ID})
		require.NoError(t, err)
		g, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: good.ID})
		require.NoError(t, err)
		return m.AuthState.Value == api.MailboxAuthStateFailing && g.AuthState.Value != api.MailboxAuthStateUnknown
	}, 10*time.Second, 50*time.Millisecond)
	m, err = r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: half.ID})
	require.NoError(t, err)
	require.False(t, m.AuthFailingSince.Null)
	require.True(t, m.AuthSpf.Value)
	require.False(t, m.AuthDmarc.Value)
	g, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: good.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxAuthStatePassing, g.AuthState.Value)
	require.True(t, g.AuthFailingSince.Null)
	require.Contains(t, orgEventTypes(t, r.env, r.org), "email_account.health_changed")

	// Within the grace period the mailbox still counts as sending; past it, warmup is blocked.
	check, err := r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: half.ID})
	require.NoError(t, err)
	require.NotEqual(t, "auth_failing", check.SendingStatus)
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET auth_failing_since = now() - interval '4 days' WHERE id = $1`, half.ID)
	_, err = r.c.MailboxesWarmupStart(ctx, api.MailboxesWarmupStartParams{ID: half.ID})
	require.NoError(t, err)
	w, err := r.c.MailboxesWarmupGet(ctx, api.MailboxesWarmupGetParams{ID: half.ID})
	require.NoError(t, err)
	require.Equal(t, api.WarmupStandingStatusBlocked, w.Status)
	check, err = r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: half.ID})
	require.NoError(t, err)
	require.Equal(t, "auth_failing", check.SendingStatus)
	require.False(t, check.Healthy)
	resp := r.env.Do(t, http.MethodGet, "/v1/emails/"+uuid.NewString()+"/auth-check", r.key, nil, nil)
	require.Equal(t, 404, resp.StatusCode)
}

func TestMailboxVerifyAddress(t *testing.T) {
	t.Parallel()
	r, d := dnsRig(t)
	ctx := context.Background()
	d.MX("acme.io", 10, "mx.acme.io")
	d.A("mx.acme.io", "198.51.100.20")

	check := func(email string) *api.MailboxVerifyResult {
		t.Helper()
		res, err := r.c.MailboxesVerifyAddress(ctx, api.NewOptMailboxVerifyRequest(api.MailboxVerifyRequest{Email: api.NewOptString(email)}), api.MailboxesVerifyAddressParams{})
		require.NoError(t, err)
		return res
	}
	res := check("Ada <ADA@acme.io>")
	require.Equal(t, "ada@acme.io", res.Email)
	require.Equal(t, api.MailboxVerifyResultStatusValid, res.Status)
	require.True(t, res.HasMx)
	require.False(t, res.IsCatchAll)
	require.NotEmpty(t, res.Reason)
	require.WithinDuration(t, time.Now(), res.CheckedAt, time.Minute)
	require.Equal(t, api.MailboxVerifyResultStatusRisky, check("sales@acme.io").Status, "a role account")
	res = check("bob@nomail.dev")
	require.Equal(t, api.MailboxVerifyResultStatusInvalid, res.Status)
	require.False(t, res.HasMx)

	// The address may come as a query parameter instead.
	byQuery, err := r.c.MailboxesVerifyAddress(ctx, api.OptMailboxVerifyRequest{}, api.MailboxesVerifyAddressParams{Email: api.NewOptString("ada@acme.io")})
	require.NoError(t, err)
	require.Equal(t, api.MailboxVerifyResultStatusValid, byQuery.Status)
	for code, p := range map[string]api.MailboxesVerifyAddressParams{"email_required": {}, "invalid_email": {Email: api.NewOptString("not an address")}} {
		_, err := r.c.MailboxesVerifyAddress(ctx, api.OptMailboxVerifyRequest{}, p)
		requireAPIError(t, err, 400, code)
	}
	_, err = r.c.MailboxesVerifyAddress(ctx, api.NewOptMailboxVerifyRequest(api.MailboxVerifyRequest{Email: api.NewOptString("a@acme.io")}),
		api.MailboxesVerifyAddressParams{Email: api.NewOptString("b@acme.io")})
	requireAPIError(t, err, 400, "conflicting_email")
}

func TestMailboxWarmupBlockAndAppeal(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	m := r.connect(t, "ada@example.com")

	st, err := r.c.MailboxesWarmupBanStatus(ctx, api.MailboxesWarmupBanStatusParams{ID: m.ID})
	require.NoError(t, err)
	require.False(t, st.Blocked)
	require.Equal(t, api.MailboxWarmupBanStatusHealthStateHealthy, st.HealthState)
	require.False(t, st.CanAppeal)
	_, err = r.c.MailboxesWarmupAppeal(ctx, api.OptMailboxWarmupAppealRequest{}, api.MailboxesWarmupAppealParams{ID: m.ID})
	requireAPIError(t, err, 409, "warmup_not_blocked")

	// The warmup network blocks it (as the warmup engine will record it).
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET warmup_health = 'blocked', warmup_blocked_at = now(),
		warmup_blocked_until = now() + interval '7 days', warmup_block_reason = 'Spam complaints from the pool' WHERE id = $1`, m.ID)
	st, err = r.c.MailboxesWarmupBanStatus(ctx, api.MailboxesWarmupBanStatusParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, st.Blocked)
	require.True(t, st.CanAppeal)
	require.False(t, st.PendingAppeal)
	require.Equal(t, "Spam complaints from the pool", st.Reason.Value)
	require.True(t, st.BlockedUntil.Value.After(st.BlockedAt.Value))

	_, err = r.c.MailboxesWarmupAppeal(ctx, api.NewOptMailboxWarmupAppealRequest(api.MailboxWarmupAppealRequest{Reason: api.NewOptString(strings.Repeat("r", 2001))}),
		api.MailboxesWarmupAppealParams{ID: m.ID})
	requireAPIError(t, err, 400, "invalid_reason")
	appeal, err := r.c.MailboxesWarmupAppeal(ctx, api.NewOptMailboxWarmupAppealRequest(api.MailboxWarmupAppealRequest{Reason: api.NewOptString("We fixed the list")}),
		api.MailboxesWarmupAppealParams{ID: m.ID})
	require.NoError(t, err)
	require.NotEqual(t, uuid.Nil, appeal.AppealID)
	_, err = r.c.MailboxesWarmupAppeal(ctx, api.OptMailboxWarmupAppealRequest{}, api.MailboxesWarmupAppealParams{ID: m.ID})
	requireAPIError(t, err, 409, "appeal_pending")
	st, err = r.c.MailboxesWarmupBanStatus(ctx, api.MailboxesWarmupBanStatusParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, st.PendingAppeal)
	require.False(t, st.CanAppeal)
	w, err := r.c.MailboxesWarmupGet(ctx, api.MailboxesWarmupGetParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, "blocked", w.HealthState.Value)
	require.Equal(t, "Spam complaints from the pool", w.BlockedReason.Value)
	require.True(t, w.BlockedUntil.Set)
	_, err = r.c.MailboxesWarmupBanStatus(ctx, api.MailboxesWarmupBanStatusParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
}

func TestMailboxSendIdentity(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	m := r.connect(t, "ada@example.com")
	id, err := r.c.MailboxesSendIdentity(ctx, api.MailboxesSendIdentityParams{ID: m.ID})
	require.NoError(t, err)
	require.False(t, id.Supported.Value)
	require.Equal(t, "smtp_imap", id.Provider.Value)
	require.Equal(t, "ada@example.com", id.MailboxEmail.Value)
	require.Empty(t, id.Identities)
	require.True(t, id.SyncedAt.Null)
	require.Equal(t, api.MailboxSendIdentitySignatureSourceManual, id.SignatureSource.Value)
	_, err = r.c.MailboxesRefreshSendIdentity(ctx, api.OptMailboxSendIdentityRefreshRequest{}, api.MailboxesRefreshSendIdentityParams{ID: m.ID})
	requireAPIError(t, err, 400, "mailbox_send_as_unsupported")

	// What a Google mailbox's refresh stored is answered as stored.
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET provider = 'gmail', identity_synced_at = now(),
		identities = '[{"email":"ada@example.com","name":"Ada","is_primary":true,"is_default":true,"verified":true},{"email":"sales@example.com","name":"Sales","verified":true}]'
		WHERE id = $1`, m.ID)
	id, err = r.c.MailboxesSendIdentity(ctx, api.MailboxesSendIdentityParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, id.Supported.Value)
	require.Len(t, id.Identities, 2)
	require.True(t, id.Identities[0].IsPrimary.Value)
	require.Equal(t, "sales@example.com", id.Identities[1].Email.Value)
	require.False(t, id.SyncedAt.Null)
	// Without a live connection to Google, a refresh cannot reach the provider.
	_, err = r.c.MailboxesRefreshSendIdentity(ctx, api.OptMailboxSendIdentityRefreshRequest{}, api.MailboxesRefreshSendIdentityParams{ID: m.ID})
	requireAPIError(t, err, 503, "mailbox_identity_unavailable")
}
