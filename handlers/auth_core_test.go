package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
	"github.com/outflowhq/outflow/internal/platform/config"
)

func requireAPIError(t *testing.T, err error, status int, code string) {
	t.Helper()
	var se *api.ErrorStatusCode
	require.ErrorAs(t, err, &se, "want %d %s", status, code)
	require.Equal(t, status, se.StatusCode, se.Response.Message)
	require.Equal(t, code, se.Response.Code)
	require.NotEmpty(t, se.Response.RequestID)
}

func TestRegisterLoginRefreshLogout(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	public := env.Client(t, "")

	reg, err := public.AuthRegisterStart(ctx, &api.AuthCredentials{Email: "Ada@Example.com", Password: apitest.Password})
	require.NoError(t, err)
	require.True(t, reg.Session.Set)
	require.False(t, reg.AccessToken.Set, "email verification comes first")
	code := env.Mail.LastCode(t, "ada@example.com")

	requireAPIError(t, public.AuthRegisterConfirm(ctx, &api.ConfirmRequest{Session: reg.Session.Value, Code: "000000"}), 401, "invalid_code")
	require.NoError(t, public.AuthRegisterConfirm(ctx, &api.ConfirmRequest{Session: reg.Session.Value, Code: code}))
	requireAPIError(t, public.AuthRegisterConfirm(ctx, &api.ConfirmRequest{Session: reg.Session.Value, Code: code}), 401, "invalid_code")

	_, err = public.AuthRegisterStart(ctx, &api.AuthCredentials{Email: "ada@example.com", Password: apitest.Password})
	requireAPIError(t, err, 401, "email_unavailable")

	pair := env.SignIn(t, "ada@example.com", apitest.Password)
	require.Len(t, env.Mail.To("ada@example.com"), 3, "verification code, sign-in code, new sign-in alert")
	require.Contains(t, env.Mail.To("ada@example.com")[2].Subject, "New sign-in")

	sessions, err := env.Client(t, pair.AccessToken).AuthListSessions(ctx)
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	require.True(t, sessions[0].Current)
	require.Equal(t, "password", sessions[0].AuthProvider)

	// Refresh rotates: the new pair works, the old refresh token is refused...
	next, err := public.AuthRefresh(ctx, &api.RefreshRequest{RefreshToken: pair.RefreshToken})
	require.NoError(t, err)
	require.NotEqual(t, pair.RefreshToken, next.RefreshToken)
	_, err = env.Client(t, next.AccessToken).AuthListSessions(ctx)
	require.NoError(t, err)
	// ...and presenting it again ends the whole family: the newest tokens die too.
	_, err = public.AuthRefresh(ctx, &api.RefreshRequest{RefreshToken: pair.RefreshToken})
	requireAPIError(t, err, 401, "refresh_token_reused")
	_, err = public.AuthRefresh(ctx, &api.RefreshRequest{RefreshToken: next.RefreshToken})
	requireAPIError(t, err, 401, "invalid_refresh_token")
	_, err = env.Client(t, next.AccessToken).AuthListSessions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")

	// Two fresh sessions; logout ends one, logout-all ends the rest.
	a := env.SignIn(t, "ada@example.com", apitest.Password)
	b := env.SignIn(t, "ada@example.com", apitest.Password)
	require.NoError(t, env.Client(t, a.AccessToken).AuthLogout(ctx, api.AuthLogoutParams{}))
	_, err = env.Client(t, a.AccessToken).AuthListSessions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")
	c := env.SignIn(t, "ada@example.com", apitest.Password)
	require.NoError(t, env.Client(t, b.AccessToken).AuthLogoutAll(ctx, api.AuthLogoutAllParams{}))
	for _, tok := range []string{b.AccessToken, c.AccessToken} {
		_, err = env.Client(t, tok).AuthListSessions(ctx)
		requireAPIError(t, err, 401, "invalid_credential")
	}
}

func TestLoginRefusals(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	public := env.Client(t, "")
	env.SignUp(t, "grace@example.com")

	_, err := public.AuthLoginStart(ctx, &api.AuthCredentials{Email: "grace@example.com", Password: "wrong password here"})
	requireAPIError(t, err, 401, "invalid_credentials")
	_, err = public.AuthLoginStart(ctx, &api.AuthCredentials{Email: "nobody@example.com", Password: apitest.Password})
	requireAPIError(t, err, 401, "invalid_credentials")
	resp := env.Do(t, "POST", "/v1/auth/login", "", strings.NewReader(`{"email":"not an email","password":"x"}`), http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// Five wrong codes spend the attempt: even the right code is refused afterwards.
	login, err := public.AuthLoginStart(ctx, &api.AuthCredentials{Email: "grace@example.com", Password: apitest.Password})
	require.NoError(t, err)
	code := env.Mail.LastCode(t, "grace@example.com")
	for range 5 {
		_, err = public.AuthLoginConfirm(ctx, &api.ConfirmRequest{Session: login.Session, Code: "999999"})
		requireAPIError(t, err, 401, "invalid_code")
	}
	_, err = public.AuthLoginConfirm(ctx, &api.ConfirmRequest{Session: login.Session, Code: code})
	requireAPIError(t, err, 401, "invalid_code")

	// A tampered handle is refused before any lookup.
	_, err = public.AuthLoginConfirm(ctx, &api.ConfirmRequest{Session: login.Session[:len(login.Session)-2] + "AA", Code: code})
	requireAPIError(t, err, 401, "invalid_code")
}

func TestWeakPasswordsAreRefused(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	for _, pw := range []string{"short", "aaaaaaaaaaaa", "password123", "lovelace-rules"} {
		_, err := env.Client(t, "").AuthRegisterStart(context.Background(), &api.AuthCredentials{Email: "lovelace@example.com", Password: pw})
		requireAPIError(t, err, 400, "weak_password")
	}
}

func TestRegistrationWithoutEmailVerificationSignsInAtOnce(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.RequireEmailVerification = false })
	res, err := env.Client(t, "").AuthRegisterStart(context.Background(), &api.AuthCredentials{Email: "fast@example.com", Password: apitest.Password})
	require.NoError(t, err)
	require.True(t, res.AccessToken.Set)
	require.False(t, res.Session.Set)
	_, err = env.Client(t, res.AccessToken.Value).AuthListSessions(context.Background())
	require.NoError(t, err)
}

func TestPasswordResetDoesNotEnumerate(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	public := env.Client(t, "")
	old := env.SignUp(t, "reset@example.com")

	require.NoError(t, public.AuthResetPasswordStart(ctx, &api.ResetPasswordStartRequest{Email: "ghost@example.com"}))
	require.Empty(t, env.Mail.To("ghost@example.com"))

	require.NoError(t, public.AuthResetPasswordStart(ctx, &api.ResetPasswordStartRequest{Email: "reset@example.com"}))
	msgs := env.Mail.To("reset@example.com")
	text := msgs[len(msgs)-1].Text
	handle := strings.TrimSpace(strings.SplitN(strings.SplitN(text, "Reset session: ", 2)[1], "\n", 2)[0])

	err := public.AuthResetPasswordConfirm(ctx, &api.ResetPasswordConfirmRequest{Session: handle, Password: "short"})
	requireAPIError(t, err, 400, "weak_password")
	require.NoError(t, public.AuthResetPasswordConfirm(ctx, &api.ResetPasswordConfirmRequest{Session: handle, Password: "a brand new passphrase"}))
	requireAPIError(t, public.AuthResetPasswordConfirm(ctx, &api.ResetPasswordConfirmRequest{Session: handle, Password: "another new passphrase"}), 401, "invalid_code")

	_, err = env.Client(t, old.AccessToken).AuthListSessions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")
	env.SignIn(t, "reset@example.com", "a brand new passphrase")
}

func TestChangePasswordEndsOtherSessions(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	a := env.SignUp(t, "change@example.com")
	b := env.SignIn(t, "change@example.com", apitest.Password)

	err := env.Client(t, a.AccessToken).AuthChangePassword(ctx, &api.ChangePasswordRequest{CurrentPassword: "nope nope nope", NewPassword: "a fresh passphrase"}, api.AuthChangePasswordParams{})
	requireAPIError(t, err, 401, "invalid_credentials")
	require.NoError(t, env.Client(t, a.AccessToken).AuthChangePassword(ctx, &api.ChangePasswordRequest{CurrentPassword: apitest.Password, NewPassword: "a fresh passphrase"}, api.AuthChangePasswordParams{}))
	_, err = env.Client(t, a.AccessToken).AuthListSessions(ctx)
	require.NoError(t, err, "the current session stays")
	_, err = env.Client(t, b.AccessToken).AuthListSessions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")
}

func TestSessionsListAndRevoke(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	a := env.SignUp(t, "s@example.com")
	b := env.SignIn(t, "s@example.com", apitest.Password)
	other := env.SignUp(t, "other@example.com")

	list, err := env.Client(t, a.AccessToken).AuthListSessions(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.True(t, list[0].Current, "the current session comes first")

	foreign, err := env.Client(t, other.AccessToken).AuthListSessions(ctx)
	require.NoError(t, err)
	err = env.Client(t, a.AccessToken).AuthRevokeSession(ctx, api.AuthRevokeSessionParams{ID: foreign[0].ID})
	requireAPIError(t, err, 404, "not_found")

	require.NoError(t, env.Client(t, a.AccessToken).AuthRevokeSession(ctx, api.AuthRevokeSessionParams{ID: list[1].ID}))
	_, err = env.Client(t, b.AccessToken).AuthListSessions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")

	c := env.SignIn(t, "s@example.com", apitest.Password)
	require.NoError(t, env.Client(t, a.AccessToken).AuthRevokeOtherSessions(ctx, api.AuthRevokeOtherSessionsParams{}))
	_, err = env.Client(t, c.AccessToken).AuthListSessions(ctx)
	requireAPIError(t, err, 401, "invalid_credential")
	_, err = env.Client(t, a.AccessToken).AuthListSessions(ctx)
	require.NoError(t, err)
}

func TestSessionOnlyRoutesRefuseAPIKeys(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	key := env.Bootstrap(t, "acme").APIKey
	_, err := env.Client(t, key).AuthListSessions(context.Background())
	requireAPIError(t, err, 403, "session_required")
	requireAPIError(t, env.Client(t, key).AuthLogout(context.Background(), api.AuthLogoutParams{}), 403, "session_required")
}

func TestCaptchaRejectionIs403(t *testing.T) {
	t.Parallel()
	verify := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		_, _ = w.Write([]byte(`{"success":` + map[bool]string{true: "true", false: "false"}[r.PostForm.Get("response") == "human"] + `}`))
	}))
	defer verify.Close()
	env := apitest.New(t, func(c *config.Config) {
		c.Captcha, c.TurnstileSecret, c.TurnstileVerifyURL = "turnstile", "s", verify.URL
	})
	ctx := context.Background()
	public := env.Client(t, "")
	_, err := public.AuthRegisterStart(ctx, &api.AuthCredentials{Email: "bot@example.com", Password: apitest.Password, Captcha: api.NewOptString("robot")})
	requireAPIError(t, err, 403, "captcha_rejected")
	_, err = public.AuthRegisterStart(ctx, &api.AuthCredentials{Email: "bot@example.com", Password: apitest.Password})
	requireAPIError(t, err, 403, "captcha_rejected")
	_, err = public.AuthRegisterStart(ctx, &api.AuthCredentials{Email: "human@example.com", Password: apitest.Password, Captcha: api.NewOptString("human")})
	require.NoError(t, err)
	//lint:ignore SA1019 clients of the reference still send `turnstile`
	_, err = public.AuthRegisterStart(ctx, &api.AuthCredentials{Email: "legacy@example.com", Password: apitest.Password, Turnstile: api.NewOptString("human")})
	require.NoError(t, err, "the legacy `turnstile` field is accepted")
}

func TestSignInIsRateLimitedPerSourceIP(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	body := `{"email":"nobody@example.com","password":"whatever it is"}`
	var last *http.Response
	for range 31 {
		last = env.Do(t, "POST", "/v1/auth/login", "", strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
		if last.StatusCode == http.StatusTooManyRequests {
			break
		}
	}
	require.Equal(t, http.StatusTooManyRequests, last.StatusCode)
	require.NotEmpty(t, last.Header.Get("Retry-After"))
}

func TestSessionsCarryTheEdgeLocation(t *testing.T) {
	t.Parallel()
	env := apitest.New(t, func(c *config.Config) { c.EdgeLocation = true })
	env.SignUp(t, "geo@example.com")
	edge := http.Header{"Content-Type": {"application/json"}, "Cf-Ipcountry": {"DE"}, "Cf-Ipcity": {"Berlin"}, "Cf-Region": {"Land Berlin"},
		"User-Agent": {"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Version/17.0 Safari/605.1.15"}}
	resp := env.Do(t, "POST", "/v1/auth/login", "", strings.NewReader(`{"email":"geo@example.com","password":"`+apitest.Password+`"}`), edge)
	require.Equal(t, 200, resp.StatusCode)
	var start struct{ Session string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&start))
	resp = env.Do(t, "POST", "/v1/auth/login/confirm", "", strings.NewReader(`{"session":"`+start.Session+`","code":"`+env.Mail.LastCode(t, "geo@example.com")+`"}`), edge)
	require.Equal(t, 200, resp.StatusCode)
	var tokens struct {
		AccessToken string `json:"access_token"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tokens))

	list, err := env.Client(t, tokens.AccessToken).AuthListSessions(context.Background())
	require.NoError(t, err)
	require.Equal(t, "Berlin", list[0].LocationCity.Value)
	require.Equal(t, "Land Berlin", list[0].LocationRegion.Value)
	require.Equal(t, "DE", list[0].CountryCode.Value)
	require.Equal(t, "Safari", list[0].Browser.Value)
	require.Equal(t, "macOS", list[0].Os.Value)
}
