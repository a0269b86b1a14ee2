package handlers_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/mail/mailbox"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/seal"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
)

// mailRig is an API whose mailboxes can reach an in-process SMTP and IMAP server pair with TLS.
type mailRig struct {
	env  *apitest.Env
	org  uuid.UUID
	key  string
	c    *api.Client
	smtp *mailtest.SMTPServer
	imap *mailtest.IMAPServer
}

const (
	rigUser     = "ada@example.com"
	rigSMTPPass = "smtp-secret-1"
	rigIMAPPass = "imap-secret-2"
)

func newMailRig(t *testing.T, opts ...apitest.Option) *mailRig {
	t.Helper()
	env := apitest.New(t, append([]apitest.Option{apitest.MailPeers(mailtest.CAFile(t))}, opts...)...)
	boot := env.Bootstrap(t, "acme")
	return &mailRig{env: env, org: boot.OrganizationID, key: boot.APIKey, c: env.Client(t, boot.APIKey),
		smtp: mailtest.NewSMTPServer(t, rigUser, rigSMTPPass), imap: mailtest.NewIMAPServer(t, rigUser, rigIMAPPass)}
}

// service names an in-process server as a connect body's smtp or imap object ("localhost" matches the test
// certificate's name).
func service(t *testing.T, addr, pass string) api.MailService {
	return apitest.MailService(t, addr, rigUser, pass)
}

func (r *mailRig) connectReq(t *testing.T, email string) *api.CreateEmailAccount {
	return &api.CreateEmailAccount{Provider: api.CreateEmailAccountProviderSMTPImap, Email: email, Name: "Ada Lovelace",
		SMTP: api.NewOptMailService(service(t, r.smtp.Addr, rigSMTPPass)),
		Imap: api.NewOptMailService(service(t, r.imap.Addr, rigIMAPPass))}
}

func (r *mailRig) connect(t *testing.T, email string) *api.Mailbox {
	t.Helper()
	m, err := r.c.MailboxesCreate(context.Background(), r.connectReq(t, email), api.MailboxesCreateParams{})
	require.NoError(t, err)
	return m
}

func TestMailboxConnectDialsBothCredentials(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()

	// Google and Microsoft need consent; the handler names that, not a generic validation error.
	for _, p := range []api.CreateEmailAccountProvider{api.CreateEmailAccountProviderGmail, api.CreateEmailAccountProviderOutlook} {
		req := r.connectReq(t, "g@example.com")
		req.Provider = p
		_, err := r.c.MailboxesCreate(ctx, req, api.MailboxesCreateParams{})
		requireAPIError(t, err, 400, "mailbox_provider_requires_oauth")
	}
	noIMAP := r.connectReq(t, "ada@example.com")
	noIMAP.Imap = api.OptMailService{}
	_, err := r.c.MailboxesCreate(ctx, noIMAP, api.MailboxesCreateParams{})
	requireAPIError(t, err, 400, "mailbox_servers_required")

	// A wrong password on either side is 400 mailbox_auth_failed with a fix, and nothing is stored.
	for _, side := range []string{"smtp", "imap"} {
		req := r.connectReq(t, "ada@example.com")
		if side == "smtp" {
			req.SMTP.Value.Password = "wrong-password-9"
		} else {
			req.Imap.Value.Password = "wrong-password-9"
		}
		_, err := r.c.MailboxesCreate(ctx, req, api.MailboxesCreateParams{})
		requireAPIError(t, err, 400, "mailbox_auth_failed")
		var se *api.ErrorStatusCode
		require.ErrorAs(t, err, &se)
		require.NotEmpty(t, se.Response.Fix.Value, side)
		require.Contains(t, se.Response.Message, side)
		require.NotContains(t, se.Response.Message, "wrong-password-9")
	}
	// Plain connections: only to a loopback host; nothing listening is a failed check, not a crash.
	plain := r.connectReq(t, "ada@example.com")
	plain.SMTP.Value.Host = "mail.example.com"
	plain.SMTP.Value.Security = api.NewOptMailServiceSecurity(api.MailServiceSecurityNone)
	_, err = r.c.MailboxesCreate(ctx, plain, api.MailboxesCreateParams{})
	requireAPIError(t, err, 400, "mailbox_insecure_connection")
	closed := r.connectReq(t, "ada@example.com")
	closed.Imap.Value.Port = freePort(t)
	_, err = r.c.MailboxesCreate(ctx, closed, api.MailboxesCreateParams{})
	requireAPIError(t, err, 400, "mailbox_auth_failed")
	bad := r.connectReq(t, "ada@example.com")
	bad.SMTP.Value.Host = "https://smtp.example.com/x"
	_, err = r.c.MailboxesCreate(ctx, bad, api.MailboxesCreateParams{})
	requireAPIError(t, err, 400, "invalid_smtp_host")
	list, err := r.c.MailboxesList(ctx, api.MailboxesListParams{})
	require.NoError(t, err)
	require.Empty(t, list.Data)

	m := r.connect(t, "Ada@Example.com")
	require.Equal(t, "ada@example.com", m.Email)
	require.Equal(t, api.MailboxProviderSMTPImap, m.Provider)
	require.Equal(t, api.MailboxStatusActive, m.Status)
	require.Equal(t, 50, m.CampaignLimit)
	require.Equal(t, 600, m.MinWaitTime)
	require.True(t, m.Warmup.Null, "warmup off until started")
	require.Contains(t, orgEventTypes(t, r.env, r.org), "email_account.connected")
	entries, err := r.c.AnalyticsAuditLogsList(ctx, api.AnalyticsAuditLogsListParams{
		Action: api.NewOptString("create"), EntityType: api.NewOptString("email_account")})
	require.NoError(t, err)
	require.Len(t, entries.Data, 1, "connecting a mailbox is the creation of an email_account in the audit vocabulary")
	require.Equal(t, api.NewOptUUID(m.ID), entries.Data[0].EntityID)
	require.Equal(t, "mailbox.connected", auditEvent(entries.Data[0]))

	// The passwords are sealed at rest, bound to the row, and never in an answer.
	var smtpSealed, imapSealed []byte
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT smtp_password, imap_password FROM mailboxes WHERE id = $1`, m.ID).Scan(&smtpSealed, &imapSealed)
	}))
	require.NotContains(t, string(smtpSealed), rigSMTPPass)
	require.NotContains(t, string(imapSealed), rigIMAPPass)
	resp := r.env.Do(t, http.MethodGet, "/v1/emails/"+m.ID.String(), r.key, nil, nil)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.NotContains(t, string(body), rigSMTPPass)
	require.NotContains(t, string(body), "password")

	_, err = r.c.MailboxesCreate(ctx, r.connectReq(t, "ada@example.com"), api.MailboxesCreateParams{})
	requireAPIError(t, err, 409, "mailbox_already_connected")

	// An Idempotency-Key makes a retried connect answer the first mailbox instead of a conflict.
	key := api.NewOptString("connect-" + uuid.NewString())
	first, err := r.c.MailboxesCreate(ctx, r.connectReq(t, "ada+2@example.com"), api.MailboxesCreateParams{IdempotencyKey: key})
	require.NoError(t, err)
	again, err := r.c.MailboxesCreate(ctx, r.connectReq(t, "ada+2@example.com"), api.MailboxesCreateParams{IdempotencyKey: key})
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

func TestMailboxAllowance(t *testing.T) {
	t.Parallel()
	r := newMailRig(t, func(c *config.Config) { c.MaxMailboxes = 2 })
	r.connect(t, "a@example.com")
	r.connect(t, "b@example.com")
	_, err := r.c.MailboxesCreate(context.Background(), r.connectReq(t, "c@example.com"), api.MailboxesCreateParams{})
	requireAPIError(t, err, 403, "mailbox_allowance_reached")
}

func TestMailboxListGetAndIsolation(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	var ids []uuid.UUID
	for i := range 5 {
		ids = append(ids, r.connect(t, fmt.Sprintf("box%d@example.com", i)).ID)
	}
	tag, err := r.c.LabelsCreateTag(ctx, &api.CreateLabel{Title: "EU"}, api.LabelsCreateTagParams{})
	require.NoError(t, err)
	_, err = r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{Name: api.NewOptString("Berlin desk"), Tags: []string{tag.ID.String()}},
		api.MailboxesUpdateParams{ID: ids[1]})
	require.NoError(t, err)

	page, err := r.c.MailboxesList(ctx, api.MailboxesListParams{Limit: api.NewOptInt(2)})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{ids[4], ids[3]}, mailboxIDs(page.Data), "newest first")
	require.True(t, page.Pagination.HasMore)
	require.Equal(t, int64(5), page.Pagination.Total.Value)
	cursor, err := uuid.Parse(page.Pagination.NextCursor.Value)
	require.NoError(t, err)
	page, err = r.c.MailboxesList(ctx, api.MailboxesListParams{Limit: api.NewOptInt(2), Cursor: api.NewOptUUID(cursor)})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{ids[2], ids[1]}, mailboxIDs(page.Data))
	page, err = r.c.MailboxesList(ctx, api.MailboxesListParams{Limit: api.NewOptInt(2), Cursor: api.NewOptUUID(ids[1])})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{ids[0]}, mailboxIDs(page.Data))
	require.False(t, page.Pagination.HasMore)

	for q, want := range map[string][]uuid.UUID{"box3": {ids[3]}, "berlin": {ids[1]}, "BOX": ids, "%": nil} {
		page, err = r.c.MailboxesList(ctx, api.MailboxesListParams{Q: api.NewOptString(q)})
		require.NoError(t, err)
		require.ElementsMatch(t, want, mailboxIDs(page.Data), q)
	}
	page, err = r.c.MailboxesList(ctx, api.MailboxesListParams{Tag: api.NewOptUUID(tag.ID)})
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{ids[1]}, mailboxIDs(page.Data))
	resp := r.env.Do(t, http.MethodGet, "/v1/emails?limit=0", r.key, nil, nil)
	require.Equal(t, 400, resp.StatusCode)
	resp = r.env.Do(t, http.MethodGet, "/v1/emails?cursor=nope", r.key, nil, nil)
	require.Equal(t, 400, resp.StatusCode)

	// GET adds the campaigns that send from the mailbox and the ten newest errors.
	camp := seedCampaign(t, r.env, r.org, "Q4 outreach")
	orgExec(t, r.env, r.org, `INSERT INTO campaign_mailboxes (organization_id, campaign_id, mailbox_id) VALUES ($1, $2, $3)`, r.org, camp, ids[0])
	for i := range 12 {
		orgExec(t, r.env, r.org, `INSERT INTO mailbox_errors (organization_id, id, mailbox_id, code, severity, title, message, created_at)
			VALUES ($1, $2, $3, 'EMAIL_AUTH_ERROR', 'error', 'Login failed', $4, now() - make_interval(mins => $5))`,
			r.org, uuid.New(), ids[0], fmt.Sprintf("attempt %d", i), 12-i)
	}
	d, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: ids[0]})
	require.NoError(t, err)
	require.Equal(t, "box0@example.com", d.Email)
	require.Equal(t, []api.MailboxCampaign{{ID: camp, Name: "Q4 outreach", Status: "draft"}}, d.Campaigns)
	require.Len(t, d.RecentErrors, 10)
	require.Equal(t, "attempt 11", d.RecentErrors[0].Message, "newest first")

	// Another organization sees none of it; deleting the tag takes it off the mailbox.
	other := r.env.Bootstrap(t, "globex")
	oc := r.env.Client(t, other.APIKey)
	_, err = oc.MailboxesGet(ctx, api.MailboxesGetParams{ID: ids[0]})
	requireAPIError(t, err, 404, "not_found")
	page, err = oc.MailboxesList(ctx, api.MailboxesListParams{})
	require.NoError(t, err)
	require.Empty(t, page.Data)
	require.NoError(t, r.c.LabelsDeleteTag(ctx, api.LabelsDeleteTagParams{ID: tag.ID}))
	d, err = r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: ids[1]})
	require.NoError(t, err)
	require.Empty(t, d.Tags)
}

func mailboxIDs(ms []api.Mailbox) []uuid.UUID {
	out := make([]uuid.UUID, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func TestMailboxUpdateValidates(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	m := r.connect(t, "ada@example.com")
	update := func(req api.MailboxUpdate) (*api.Mailbox, error) {
		return r.c.MailboxesUpdate(ctx, &req, api.MailboxesUpdateParams{ID: m.ID})
	}
	for code, req := range map[string]api.MailboxUpdate{
		"invalid_timezone":        {Timezone: api.NewOptString("Mars/Olympus")},
		"mailbox_send_as_unknown": {SendAsEmail: api.NewOptString("sales@example.com")},
		"invalid_reply_to":        {ReplyTo: api.NewOptString("not an address")},
		"invalid_warmup_base":     {WarmupBase: api.NewOptInt(50), WarmupMax: api.NewOptInt(10)},
		"invalid_warmup_days":     {WarmupDays: api.NewOptInt(8)},
		"invalid_min_wait_time":   {MinWaitTime: api.NewOptInt(-1)},
		"unknown_tags":            {Tags: []string{uuid.NewString()}},
		"invalid_tags":            {Tags: []string{"x"}},
		"invalid_name":            {Name: api.NewOptString(strings.Repeat("n", 256))},
	} {
		_, err := update(req)
		requireAPIError(t, err, 400, code)
	}
	// What the schema itself bounds is refused before the handler (the client checks it too).
	for _, body := range []string{`{"campaign_limit":5001}`, `{"warmup_start_time":"25:00"}`, `{"status":"paused"}`} {
		resp := r.env.Do(t, http.MethodPatch, "/v1/emails/"+m.ID.String(), r.key, strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
		require.Equal(t, 400, resp.StatusCode, body)
	}

	got, err := update(api.MailboxUpdate{
		Name: api.NewOptString(" Ada "), SignaturePlain: api.NewOptString("-- Ada"), SignatureHTML: api.NewOptString("<b>Ada</b>"),
		SignatureSync: api.NewOptBool(true), SendAsEmail: api.NewOptString("ADA@example.com"), Status: api.NewOptMailboxStatus(api.MailboxStatusInactive),
		CampaignLimit: api.NewOptInt(0), MinWaitTime: api.NewOptInt(120), ReplyTo: api.NewOptString("Replies <Team@Example.com>"),
		Timezone: api.NewOptString("Europe/Berlin"), WarmupBase: api.NewOptInt(5), WarmupMax: api.NewOptInt(30),
		WarmupIncrease: api.NewOptInt(3), WarmupReplyRate: api.NewOptInt(40), WarmupTag: api.NewOptString("wx1"),
		WarmupStartTime: api.NewOptString("08:30"), WarmupEndTime: api.NewOptString("17:00"), WarmupDays: api.NewOptInt(5),
		Warmup: api.NewOptBool(true),
	})
	require.NoError(t, err)
	require.Equal(t, "Ada", got.Name.Value)
	require.Equal(t, "-- Ada", got.SignaturePlain.Value)
	require.True(t, got.SignatureSync.Value)
	require.Equal(t, "", got.SendAsEmail.Value, "the own address is the default")
	require.Equal(t, api.MailboxStatusInactive, got.Status)
	require.Equal(t, 0, got.CampaignLimit)
	require.Equal(t, 120, got.MinWaitTime)
	require.Equal(t, "team@example.com", got.ReplyTo.Value)
	require.Equal(t, "Europe/Berlin", got.Timezone.Value)
	require.Equal(t, 5, got.WarmupBase.Value)
	require.Equal(t, "08:30", got.WarmupStartTime.Value)
	require.Equal(t, 5, got.WarmupDays.Value)
	require.False(t, got.Warmup.Null, "warmup true enables it")
	require.Contains(t, orgEventTypes(t, r.env, r.org), "email_account.disconnected")

	got, err = update(api.MailboxUpdate{Timezone: api.NewOptString(""), Warmup: api.NewOptBool(false)})
	require.NoError(t, err)
	require.Equal(t, "", got.Timezone.Value, "an empty timezone clears it")
	require.True(t, got.Warmup.Null)
	require.Equal(t, "Ada", got.Name.Value, "fields not sent are kept")

	// A verified alias (as an identity refresh stores it) may be chosen; an unverified one may not.
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET identities = '[{"email":"sales@example.com","verified":true},{"email":"ops@example.com","verified":false}]' WHERE id = $1`, m.ID)
	got, err = update(api.MailboxUpdate{SendAsEmail: api.NewOptString("Sales@Example.com")})
	require.NoError(t, err)
	require.Equal(t, "sales@example.com", got.SendAsEmail.Value)
	_, err = update(api.MailboxUpdate{SendAsEmail: api.NewOptString("ops@example.com")})
	requireAPIError(t, err, 400, "mailbox_send_as_unknown")
	_, err = r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{}, api.MailboxesUpdateParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
}

func TestMailboxLiveTest(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	m := r.connect(t, "ada@example.com")
	check, err := r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, check.Auth)
	require.True(t, check.SMTP.Value)
	require.True(t, check.Imap.Value)
	require.True(t, check.Healthy)
	require.Equal(t, "ready", check.SendingStatus)
	require.Equal(t, 50, check.DailyLimit)
	require.Equal(t, 600, check.MinDelaySeconds)
	require.False(t, check.Error.Set)
	require.Equal(t, api.WarmupStandingStatusStopped, check.Warmup.Value.Status)

	// The provider's password changed under us: still 200, auth false, the error with its fix.
	keyring, err := seal.NewKeyring(r.env.Config.SecretKey)
	require.NoError(t, err)
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET imap_password = $2 WHERE id = $1`, m.ID,
		mailbox.SealPassword(keyring, r.org, m.ID, mailbox.ServiceIMAP, "stale-password"))
	check, err = r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: m.ID})
	require.NoError(t, err)
	require.False(t, check.Auth)
	require.False(t, check.Healthy)
	require.True(t, check.Imap.Value, "reachable, only the login failed")
	require.Equal(t, "credential_failing", check.SendingStatus)
	require.Equal(t, "mailbox_auth_failed", check.Error.Value.Code)
	require.NotEmpty(t, check.Error.Value.Fix.Value)

	// A sealed value moved to another mailbox's row does not open there.
	other := r.connect(t, "ada+2@example.com")
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET smtp_password = (SELECT smtp_password FROM mailboxes WHERE id = $1) WHERE id = $2`, m.ID, other.ID)
	check, err = r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: other.ID})
	require.NoError(t, err)
	require.False(t, check.Auth)
}

func TestMailboxColdRotation(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	m := r.connect(t, "ada@example.com")

	st, err := r.c.MailboxesRelease(ctx, api.MailboxesReleaseParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxRotationStateStateActive, st.State, "releasing an active mailbox changes nothing")
	held, err := r.c.MailboxesHold(ctx, api.MailboxesHoldParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxRotationStateStateReserve, held.State)
	again, err := r.c.MailboxesHold(ctx, api.MailboxesHoldParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, held.Since.Value, again.Since.Value, "holding a held mailbox is idempotent")
	st, err = r.c.MailboxesRelease(ctx, api.MailboxesReleaseParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxRotationStateStateActive, st.State, "no warmup running")

	// With warmup running and reporting the mailbox throttled, a release rests it instead.
	_, err = r.c.MailboxesWarmupStart(ctx, api.MailboxesWarmupStartParams{ID: m.ID})
	require.NoError(t, err)
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET warmup_health = 'throttled' WHERE id = $1`, m.ID)
	_, err = r.c.MailboxesHold(ctx, api.MailboxesHoldParams{ID: m.ID})
	require.NoError(t, err)
	st, err = r.c.MailboxesRelease(ctx, api.MailboxesReleaseParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxRotationStateStateResting, st.State)
	check, err := r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, "resting", check.SendingStatus)
	_, err = r.c.MailboxesHold(ctx, api.MailboxesHoldParams{ID: uuid.New()})
	requireAPIError(t, err, 404, "not_found")
}

func TestMailboxWarmupLifecycle(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	m := r.connect(t, "ada@example.com")

	_, err := r.c.MailboxesWarmupPause(ctx, api.MailboxesWarmupPauseParams{ID: m.ID})
	requireAPIError(t, err, 409, "mailbox_warmup_disabled")
	w, err := r.c.MailboxesWarmupGet(ctx, api.MailboxesWarmupGetParams{ID: m.ID})
	require.NoError(t, err)
	require.False(t, w.Enabled)
	require.Equal(t, api.WarmupStandingStatusStopped, w.Status)
	require.Zero(t, w.DailyTarget)

	started, err := r.c.MailboxesWarmupStart(ctx, api.MailboxesWarmupStartParams{ID: m.ID})
	require.NoError(t, err)
	require.False(t, started.Warmup.Null)
	w, err = r.c.MailboxesWarmupGet(ctx, api.MailboxesWarmupGetParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, w.Enabled)
	require.Equal(t, api.WarmupStandingStatusWarming, w.Status)
	require.Equal(t, 2, w.DailyTarget, "day one sends the base volume")

	// Ten days in (anchor moved back), the ramp is at base + 10 x increase.
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET warmup = warmup - interval '10 days' WHERE id = $1`, m.ID)
	w, err = r.c.MailboxesWarmupGet(ctx, api.MailboxesWarmupGetParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, 22, w.DailyTarget)

	paused, err := r.c.MailboxesWarmupPause(ctx, api.MailboxesWarmupPauseParams{ID: m.ID})
	require.NoError(t, err)
	require.False(t, paused.WarmupPausedAt.Null)
	// Paused three days: the ramp stands still, and resuming shifts the anchor by the pause.
	orgExec(t, r.env, r.org, `UPDATE mailboxes SET warmup = warmup - interval '3 days', warmup_paused_at = warmup_paused_at - interval '3 days' WHERE id = $1`, m.ID)
	w, err = r.c.MailboxesWarmupGet(ctx, api.MailboxesWarmupGetParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.WarmupStandingStatusPaused, w.Status)
	require.Equal(t, 22, w.DailyTarget)
	resumed, err := r.c.MailboxesWarmupResume(ctx, api.MailboxesWarmupResumeParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, resumed.WarmupPausedAt.Null)
	require.WithinDuration(t, time.Now().Add(-10*24*time.Hour), resumed.Warmup.Value, time.Minute)
	w, err = r.c.MailboxesWarmupGet(ctx, api.MailboxesWarmupGetParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, 22, w.DailyTarget, "progress kept across the pause")

	stopped, err := r.c.MailboxesWarmupStop(ctx, api.MailboxesWarmupStopParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, stopped.Warmup.Null)
	_, err = r.c.MailboxesWarmupResume(ctx, api.MailboxesWarmupResumeParams{ID: m.ID})
	requireAPIError(t, err, 409, "mailbox_warmup_disabled")
	restarted, err := r.c.MailboxesWarmupStart(ctx, api.MailboxesWarmupStartParams{ID: m.ID})
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), restarted.Warmup.Value, time.Minute, "a start after a stop begins a fresh ramp")
}

func TestMailboxDeleteCancelsPendingSends(t *testing.T) {
	t.Parallel()
	r := newMailRig(t)
	ctx := context.Background()
	m := r.connect(t, "ada@example.com")
	queued, sent := uuid.New(), uuid.New()
	orgExec(t, r.env, r.org, `INSERT INTO send_tasks (organization_id, id, kind, status, mailbox_id, from_email, to_email)
		VALUES ($1, $2, 'direct', 'queued', $4, 'ada@example.com', 'bob@example.com'),
		       ($1, $3, 'direct', 'sent', $4, 'ada@example.com', 'cy@example.com')`, r.org, queued, sent, m.ID)

	require.NoError(t, r.c.MailboxesDelete(ctx, api.MailboxesDeleteParams{ID: m.ID}))
	_, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: m.ID})
	requireAPIError(t, err, 404, "not_found")
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM send_tasks WHERE id = $1 AND status = 'canceled' AND error_code = 'mailbox_removed'`, queued))
	require.Equal(t, int64(1), orgInt(t, r.env, r.org, `SELECT count(*) FROM send_tasks WHERE id = $1 AND status = 'sent'`, sent), "sent history stays")
	require.Contains(t, orgEventTypes(t, r.env, r.org), "email_account.removed")
	requireAPIError(t, r.c.MailboxesDelete(ctx, api.MailboxesDeleteParams{ID: m.ID}), 404, "not_found")
}
