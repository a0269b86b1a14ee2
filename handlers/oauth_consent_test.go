package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2"

	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/db"
)

// TestOAuthConsentNeedsManageAPIKeys: a member without manage_api_keys is offered no organization and cannot
// approve for one.
func TestOAuthConsentNeedsManageAPIKeys(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	owner := orgSignUp(t, env, "boss@oauth.example")
	member := orgJoin(t, env, owner, orgSignUp(t, env, "member@oauth.example"), "member")

	// The member's own organization is offered; the one they joined as a plain member is not.
	reg := registerPublicClient(t, env, "read_contacts")
	conf := oauthConfig(env, reg.ClientID, "", "read_contacts")
	browser := newOAuthBrowser(t, env, member.email)
	page := browser.consent(t, conf.AuthCodeURL("s", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	var offered []string
	for _, m := range orgOption.FindAllStringSubmatch(page, -1) {
		offered = append(offered, m[1])
	}
	require.Equal(t, []string{member.home.String()}, offered)

	form := hiddenFields(page)
	form.Set("organization_id", owner.home.String())
	form.Set("decision", "approve")
	resp, body := browser.post(t, "/oauth/authorize", form)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	form.Set("organization_id", uuid.NewString())
	resp, body = browser.post(t, "/oauth/authorize", form)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, body)

	// Nothing was granted in the owner's organization.
	var n int
	require.NoError(t, db.WithOrgTx(context.Background(), env.DB.Pool, owner.home, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM oauth_grants WHERE organization_id = $1`, owner.home).Scan(&n)
	}))
	require.Zero(t, n)
}

// TestOAuthConsentSignInWithTwoFactor: the consent page's sign-in asks for the second factor when 2FA is on,
// and a wrong code or password is shown on the page.
func TestOAuthConsentSignInWithTwoFactor(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	pair := env.SignUp(t, "2fa@oauth.example")
	_, _, recovery := enrolTOTP(t, env.Client(t, pair.AccessToken))
	reg := registerPublicClient(t, env, "read_contacts")
	conf := oauthConfig(env, reg.ClientID, "", "read_contacts")
	browser := newOAuthBrowser(t, env, "2fa@oauth.example")

	resp, page := browser.get(t, conf.AuthCodeURL("state-2fa", oauth2.S256ChallengeOption(oauth2.GenerateVerifier())))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	form := hiddenFields(page)
	form.Set("email", "2fa@oauth.example")
	form.Set("password", "not the password")
	resp, page = browser.post(t, "/oauth/sign-in", form)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, page, `class="error"`)

	form.Set("password", apitest.Password)
	resp, page = browser.post(t, "/oauth/sign-in", form)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	form = hiddenFields(page)
	form.Set("code", env.Mail.LastCode(t, "2fa@oauth.example"))
	resp, page = browser.post(t, "/oauth/sign-in", form)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	require.Contains(t, page, `name="step" value="totp"`)
	require.Equal(t, "/oauth/sign-in", resp.Request.URL.Path, "no session yet")

	form = hiddenFields(page)
	form.Set("code", "000000")
	resp, page = browser.post(t, "/oauth/sign-in", form)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, page)
	require.Contains(t, page, `name="step" value="totp"`)
	form = hiddenFields(page)
	form.Set("code", recovery[0])
	resp, page = browser.post(t, "/oauth/sign-in", form)
	require.Equal(t, http.StatusOK, resp.StatusCode, page)
	require.Equal(t, "/oauth/authorize", resp.Request.URL.Path)
	require.Contains(t, page, "Authorize Agent CLI")

	// The next destination is always this server's consent page.
	resp, page = browser.get(t, "/oauth/sign-in?next="+url.QueryEscape("https://evil.example/phish"))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "/oauth/authorize", hiddenFields(page).Get("next"))
}
