package handlers_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/testkit/mailtest"
	"github.com/outflowhq/outflow/internal/testkit/oidctest"
)

const oauthUser = "grace@example.com"

// oauthRig is an API whose gmail consent runs against an in-process authorization server, whose mail servers
// accept exactly the access tokens that server issued last, and whose Gmail settings API is an httptest
// server.
type oauthRig struct {
	*mailRig
	idp *oidctest.Provider

	mu          sync.Mutex
	token       string // the access token issued last
	sendAs      []any  // what the settings API answers
	imapRefuses bool   // the IMAP server takes no new token (IMAP disabled at the provider)
	gmail       *httptest.Server
	provider    api.MailboxesOAuthCliStartReqProvider
}

// newOAuthRig configures gmail consent only.
func newOAuthRig(t *testing.T, accessTTL time.Duration) *oauthRig {
	return newOAuthRigFor(t, accessTTL, api.MailboxesOAuthCliStartReqProviderGmail)
}

// newOAuthRigFor configures the consent of one provider (gmail or outlook).
func newOAuthRigFor(t *testing.T, accessTTL time.Duration, provider api.MailboxesOAuthCliStartReqProvider) *oauthRig {
	t.Helper()
	r := &oauthRig{provider: provider}
	smtp := mailtest.NewSMTPServer(t, oauthUser, "password-never-used-1")
	imap := mailtest.NewIMAPServer(t, oauthUser, "password-never-used-2")
	r.idp = oidctest.New(t, oidctest.Options{ClientID: "mail-client", ClientSecret: "mail-secret", AuthMethod: "client_secret_post",
		AccessTTL: accessTTL, OnAccessToken: func(tok string) {
			r.mu.Lock()
			r.token = tok
			refuse := r.imapRefuses
			r.mu.Unlock()
			smtp.AcceptToken(tok)
			if !refuse {
				imap.AcceptToken(tok)
			}
		}})
	r.idp.SignInAs(oidctest.User{Subject: "g-1", Email: "Grace@Example.com", EmailVerified: true})
	r.gmail = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.URL.Path != "/gmail/v1/users/me/settings/sendAs" || req.Header.Get("Authorization") != "Bearer "+r.token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"sendAs": r.sendAs})
	}))
	t.Cleanup(r.gmail.Close)
	local := func(addr string) string {
		_, port, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		return "localhost:" + port
	}
	r.mailRig = newMailRig(t, func(c *config.Config) {
		mc := config.MailboxOAuthConfig{ClientID: "mail-client", ClientSecret: "mail-secret",
			AuthURL: r.idp.Issuer + "/authorize", TokenURL: r.idp.Issuer + "/token", APIURL: r.gmail.URL,
			SMTP: local(smtp.Addr), IMAP: local(imap.Addr)}
		if provider == api.MailboxesOAuthCliStartReqProviderOutlook {
			mc.APIURL = ""
			c.MailboxMicrosoft = mc
		} else {
			c.MailboxGoogle = mc
		}
	})
	r.smtp, r.imap = smtp, imap
	return r
}

func (r *oauthRig) setSendAs(v ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sendAs = v
}

// consent runs cli-start, plays the browser at the provider and brings it back to the callback; it answers
// the session and where the callback sent the browser.
func (r *oauthRig) consent(t *testing.T) (session, location string) {
	t.Helper()
	session, query := r.authorize(t)
	return session, r.callback(t, query)
}

// authorize runs cli-start and plays the browser at the provider; it answers the session and the query the
// provider sends the browser back with.
func (r *oauthRig) authorize(t *testing.T) (session, query string) {
	t.Helper()
	ctx := context.Background()
	start, err := r.c.MailboxesOAuthCliStart(ctx, &api.MailboxesOAuthCliStartReq{Provider: r.provider})
	require.NoError(t, err)
	require.Equal(t, 600, start.ExpiresIn)
	s, err := r.c.MailboxesOAuthSessionGet(ctx, api.MailboxesOAuthSessionGetParams{Session: start.Session})
	require.NoError(t, err)
	require.Equal(t, api.EmailOAuthCLISessionStatusPending, s.Status)
	require.Equal(t, string(r.provider), s.Provider)
	redirect, params := r.idp.Authorize(t, start.URL.String())
	require.True(t, strings.HasSuffix(redirect, "/v1/emails/onboarding/oauth/callback"), redirect)
	return start.Session, params.Encode()
}

// callback is the browser arriving at the callback with query; it answers the redirect's Location.
func (r *oauthRig) callback(t *testing.T, query string) string {
	t.Helper()
	client := *r.env.Server.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := client.Get(r.env.Server.URL + "/v1/emails/onboarding/oauth/callback?" + query)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusFound, resp.StatusCode)
	return resp.Header.Get("Location")
}

func (r *oauthRig) session(t *testing.T, id string) *api.EmailOAuthCLISession {
	t.Helper()
	s, err := r.c.MailboxesOAuthSessionGet(context.Background(), api.MailboxesOAuthSessionGetParams{Session: id})
	require.NoError(t, err)
	return s
}

func TestMailboxOAuthConsentConnectsRefreshesAndRevokes(t *testing.T) {
	t.Parallel()
	// Access tokens live two minutes, under the refresh margin: every use refreshes first.
	r := newOAuthRig(t, 2*time.Minute)
	ctx := context.Background()

	// Microsoft consent is not configured on this deployment.
	_, err := r.c.MailboxesOAuthCliStart(ctx, &api.MailboxesOAuthCliStartReq{Provider: api.MailboxesOAuthCliStartReqProviderOutlook})
	requireAPIError(t, err, 503, "mailbox_oauth_unavailable")
	_, err = r.c.MailboxesOAuthSessionGet(ctx, api.MailboxesOAuthSessionGetParams{Session: uuid.NewString()})
	requireAPIError(t, err, 404, "not_found")

	session, answer := r.authorize(t)
	require.Equal(t, r.env.Config.AppURL+"/emails/connected?status=done", r.callback(t, answer))
	s := r.session(t, session)
	require.Equal(t, api.EmailOAuthCLISessionStatusDone, s.Status, "%+v", s.Error)
	require.Equal(t, `"grace@example.com"`, string(s.Account.Value["email"]))
	require.Equal(t, `"gmail"`, string(s.Account.Value["provider"]))
	list, err := r.c.MailboxesList(ctx, api.MailboxesListParams{})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	m := list.Data[0]
	require.Equal(t, api.MailboxProviderGmail, m.Provider)
	require.Contains(t, orgEventTypes(t, r.env, r.org), "email_account.connected")

	// The tokens are stored sealed: neither appears in the row.
	r.mu.Lock()
	issued := r.token
	r.mu.Unlock()
	require.NoError(t, db.WithOrgTx(ctx, r.env.DB.Pool, r.org, func(ctx context.Context, tx pgx.Tx) error {
		var access, refresh []byte
		if err := tx.QueryRow(ctx, `SELECT access_sealed, refresh_sealed FROM mailbox_oauth_tokens WHERE mailbox_id = $1`, m.ID).Scan(&access, &refresh); err != nil {
			return err
		}
		require.NotContains(t, string(access), issued)
		require.NotEmpty(t, refresh)
		return nil
	}))

	// A state is answered once: the same answer again changes nothing; an unknown state is refused too.
	require.Contains(t, r.callback(t, answer), "status=failed&error=invalid_state")
	require.Equal(t, api.EmailOAuthCLISessionStatusDone, r.session(t, session).Status)
	require.Contains(t, r.callback(t, "code=x&state=not-a-state"), "status=failed&error=invalid_state")

	// SMTP and IMAP log in with XOAUTH2; the token (two-minute lifetime) is refreshed first, and the mail
	// servers accept only the newest token, so passing proves the refreshed one was used.
	before := r.idp.Refreshes()
	check, err := r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, check.Auth, "%+v", check.Error)
	require.Greater(t, r.idp.Refreshes(), before)

	// The person removes the app's access: the next use moves the mailbox to revoked with an error entry and
	// email_account.disconnected.
	r.idp.RevokeGrants()
	check, err = r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: m.ID})
	require.NoError(t, err)
	require.False(t, check.Auth)
	got, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxStatusRevoked, got.Status)
	require.NotEmpty(t, got.RecentErrors)
	require.Equal(t, "EMAIL_AUTH_ERROR", got.RecentErrors[0].Code)
	require.Contains(t, orgEventTypes(t, r.env, r.org), "email_account.disconnected")

	// A new consent for the same address reconnects the same mailbox.
	session, loc := r.consent(t)
	require.Contains(t, loc, "status=done")
	require.Equal(t, api.EmailOAuthCLISessionStatusDone, r.session(t, session).Status)
	got, err = r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: m.ID})
	require.NoError(t, err)
	require.Equal(t, api.MailboxStatusActive, got.Status)
	list, err = r.c.MailboxesList(ctx, api.MailboxesListParams{})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	check, err = r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: m.ID})
	require.NoError(t, err)
	require.True(t, check.Auth, "%+v", check.Error)
}

func TestMailboxOAuthConsentFailures(t *testing.T) {
	t.Parallel()
	r := newOAuthRig(t, time.Hour)

	// Refused at the provider: the session fails with the reason, and no mailbox exists.
	r.idp.Refuse("access_denied")
	session, loc := r.consent(t)
	require.Contains(t, loc, "status=failed&error=access_denied")
	s := r.session(t, session)
	require.Equal(t, api.EmailOAuthCLISessionStatusFailed, s.Status)
	require.Equal(t, "access_denied", s.Error.Value.Code)
	require.NotEmpty(t, s.Error.Value.Fix.Value)

	// The mail servers refuse the token (IMAP disabled at the provider, say): mailbox_auth_failed, nothing
	// stored.
	r.idp.Refuse("")
	r.mu.Lock()
	r.imapRefuses = true
	r.mu.Unlock()
	session, loc = r.consent(t)
	require.Contains(t, loc, "status=failed&error=mailbox_auth_failed")
	s = r.session(t, session)
	require.Contains(t, s.Error.Value.Message, "imap")
	list, err := r.c.MailboxesList(context.Background(), api.MailboxesListParams{})
	require.NoError(t, err)
	require.Empty(t, list.Data)
}

func TestMailboxIdentityRefreshFromGmail(t *testing.T) {
	t.Parallel()
	r := newOAuthRig(t, time.Hour)
	ctx := context.Background()
	_, loc := r.consent(t)
	require.Contains(t, loc, "status=done")
	list, err := r.c.MailboxesList(ctx, api.MailboxesListParams{})
	require.NoError(t, err)
	id := list.Data[0].ID

	primary := map[string]any{"sendAsEmail": oauthUser, "displayName": "Grace", "isPrimary": true, "isDefault": true,
		"signature": "<div><b>Grace Hopper</b><br>Rear Admiral</div>"}
	sales := map[string]any{"sendAsEmail": "Sales@Example.com", "displayName": "Sales", "verificationStatus": "accepted"}
	pending := map[string]any{"sendAsEmail": "pending@example.com", "verificationStatus": "pending"}
	r.setSendAs(primary, sales, pending)

	refresh := func(importSignature bool) (*api.MailboxSendIdentity, error) {
		return r.c.MailboxesRefreshSendIdentity(ctx, api.NewOptMailboxSendIdentityRefreshRequest(
			api.MailboxSendIdentityRefreshRequest{ImportSignature: api.NewOptBool(importSignature)}),
			api.MailboxesRefreshSendIdentityParams{ID: id})
	}
	// Without import_signature the signature is left alone.
	got, err := refresh(false)
	require.NoError(t, err)
	require.Len(t, got.Identities, 3)
	require.Equal(t, "sales@example.com", got.Identities[1].Email.Value)
	require.True(t, got.Identities[1].Verified.Value)
	require.False(t, got.Identities[2].Verified.Value)
	require.False(t, got.SyncedAt.Null)
	require.Equal(t, api.MailboxSendIdentitySignatureSourceManual, got.SignatureSource.Value)

	got, err = refresh(true)
	require.NoError(t, err)
	require.Equal(t, api.MailboxSendIdentitySignatureSourceProvider, got.SignatureSource.Value)
	require.False(t, got.SignatureImportedAt.Null)
	m, err := r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, primary["signature"], m.SignatureHTML.Value)
	require.Contains(t, m.SignaturePlain.Value, "Grace Hopper")
	require.NotContains(t, m.SignaturePlain.Value, "<b>")

	// A verified alias can be chosen; an unverified one cannot.
	_, err = r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{SendAsEmail: api.NewOptString("pending@example.com")}, api.MailboxesUpdateParams{ID: id})
	requireAPIError(t, err, 400, "mailbox_send_as_unknown")
	_, err = r.c.MailboxesUpdate(ctx, &api.MailboxUpdate{SendAsEmail: api.NewOptString("sales@example.com")}, api.MailboxesUpdateParams{ID: id})
	require.NoError(t, err)

	// An oversized signature stores nothing, not even the identities.
	r.setSendAs(map[string]any{"sendAsEmail": oauthUser, "isPrimary": true, "signature": strings.Repeat("x", 10001)},
		map[string]any{"sendAsEmail": "sales@example.com", "verificationStatus": "accepted", "signature": strings.Repeat("y", 10001)})
	_, err = refresh(true)
	requireAPIError(t, err, 400, "mailbox_signature_too_large")
	m, err = r.c.MailboxesGet(ctx, api.MailboxesGetParams{ID: id})
	require.NoError(t, err)
	require.Equal(t, primary["signature"], m.SignatureHTML.Value)

	// The provider stops verifying the alias: the send-as choice is cleared.
	r.setSendAs(primary)
	got, err = refresh(false)
	require.NoError(t, err)
	require.Len(t, got.Identities, 1)
	require.Empty(t, got.SendAsEmail.Value)

	// The settings API refusing the token is an unavailable provider, not a client error.
	r.mu.Lock()
	r.token = "rotated-elsewhere"
	r.mu.Unlock()
	_, err = refresh(false)
	requireAPIError(t, err, 503, "mailbox_identity_unavailable")
}

func TestMailboxOAuthOutlookReadsTheAddressFromPreferredUsername(t *testing.T) {
	t.Parallel()
	r := newOAuthRigFor(t, time.Hour, api.MailboxesOAuthCliStartReqProviderOutlook)
	ctx := context.Background()
	_, err := r.c.MailboxesOAuthCliStart(ctx, &api.MailboxesOAuthCliStartReq{Provider: api.MailboxesOAuthCliStartReqProviderGmail})
	requireAPIError(t, err, 503, "mailbox_oauth_unavailable")

	// Microsoft work accounts often carry the address only in preferred_username.
	r.idp.Tamper(func(c oidctest.Claims) {
		delete(c, "email")
		c["preferred_username"] = "GRACE@example.com"
	})
	session, loc := r.consent(t)
	require.Contains(t, loc, "status=done")
	s := r.session(t, session)
	require.Equal(t, api.EmailOAuthCLISessionStatusDone, s.Status, "%+v", s.Error)
	require.Equal(t, `"grace@example.com"`, string(s.Account.Value["email"]))
	require.Equal(t, `"outlook"`, string(s.Account.Value["provider"]))

	list, err := r.c.MailboxesList(ctx, api.MailboxesListParams{})
	require.NoError(t, err)
	require.Len(t, list.Data, 1)
	check, err := r.c.MailboxesTest(ctx, api.MailboxesTestParams{ID: list.Data[0].ID})
	require.NoError(t, err)
	require.True(t, check.Auth, "%+v", check.Error)
	// Only Google exposes send-as addresses.
	_, err = r.c.MailboxesRefreshSendIdentity(ctx, api.OptMailboxSendIdentityRefreshRequest{}, api.MailboxesRefreshSendIdentityParams{ID: list.Data[0].ID})
	requireAPIError(t, err, 400, "mailbox_send_as_unsupported")

	// An ID token naming no address proves no mailbox.
	r.idp.Tamper(func(c oidctest.Claims) { delete(c, "email") })
	session, loc = r.consent(t)
	require.Contains(t, loc, "status=failed&error=mailbox_auth_failed")
	require.Equal(t, "mailbox_auth_failed", r.session(t, session).Error.Value.Code)
}
