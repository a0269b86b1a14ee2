package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/gen/api"
	"github.com/outflowhq/outflow/handlers/apitest"
)

// totpAt computes the authenticator app's code for the time step that holds at.
func totpAt(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCode(secret, at)
	require.NoError(t, err)
	return code
}

// wrongCode is a well-formed code that is not code.
func wrongCode(code string) string {
	return string(rune('0'+(code[0]-'0'+1)%10)) + code[1:]
}

// enrolTOTP turns 2FA on for the session's user and returns the secret, the time step whose code confirmed
// the enrolment (now used) and the recovery codes.
func enrolTOTP(t *testing.T, c *api.Client) (secret string, usedStep time.Time, recovery []string) {
	t.Helper()
	ctx := context.Background()
	start, err := c.Auth2FAEnrollStart(ctx, api.Auth2FAEnrollStartParams{})
	require.NoError(t, err)
	usedStep = time.Now()
	codes, err := c.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: totpAt(t, start.Secret, usedStep)}, api.Auth2FAEnrollConfirmParams{})
	require.NoError(t, err)
	return start.Secret, usedStep, codes.RecoveryCodes
}

// passwordStep runs the password and emailed-code steps of a sign-in and returns the 2FA challenge.
func passwordStep(t *testing.T, env *apitest.Env, email string) *api.LoginResult {
	t.Helper()
	ctx := context.Background()
	public := env.Client(t, "")
	login, err := public.AuthLoginStart(ctx, &api.AuthCredentials{Email: email, Password: apitest.Password})
	require.NoError(t, err)
	res, err := public.AuthLoginConfirm(ctx, &api.ConfirmRequest{Session: login.Session, Code: env.Mail.LastCode(t, email)})
	require.NoError(t, err)
	require.True(t, res.TwoFaRequired.Value, "2FA users get the challenge, not tokens")
	require.False(t, res.AccessToken.Set)
	return res
}

func TestTwoFactorEnrolment(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	c := env.Client(t, env.SignUp(t, "ada@example.com").AccessToken)

	status, err := c.Auth2FAStatus(ctx)
	require.NoError(t, err)
	require.False(t, status.Enabled)

	_, err = c.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: "123456"}, api.Auth2FAEnrollConfirmParams{})
	requireAPIError(t, err, 400, "two_fa_not_started")

	first, err := c.Auth2FAEnrollStart(ctx, api.Auth2FAEnrollStartParams{})
	require.NoError(t, err)
	uri, err := url.Parse(first.OtpauthURI)
	require.NoError(t, err)
	require.Equal(t, "otpauth", uri.Scheme)
	require.Equal(t, "totp", uri.Host)
	require.Equal(t, "/Outflow:ada@example.com", uri.Path)
	require.Equal(t, first.Secret, uri.Query().Get("secret"))
	require.Equal(t, "Outflow", uri.Query().Get("issuer"))

	// Starting again replaces the pending secret: the first one no longer confirms.
	second, err := c.Auth2FAEnrollStart(ctx, api.Auth2FAEnrollStartParams{})
	require.NoError(t, err)
	require.NotEqual(t, first.Secret, second.Secret)
	_, err = c.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: totpAt(t, first.Secret, time.Now())}, api.Auth2FAEnrollConfirmParams{})
	requireAPIError(t, err, 400, "invalid_code")
	code := totpAt(t, second.Secret, time.Now())
	_, err = c.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: wrongCode(code)}, api.Auth2FAEnrollConfirmParams{})
	requireAPIError(t, err, 400, "invalid_code")
	status, err = c.Auth2FAStatus(ctx)
	require.NoError(t, err)
	require.False(t, status.Enabled, "2FA stays off until a code confirms it")

	codes, err := c.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: code}, api.Auth2FAEnrollConfirmParams{})
	require.NoError(t, err)
	require.Len(t, codes.RecoveryCodes, 10)
	seen := map[string]bool{}
	for _, rc := range codes.RecoveryCodes {
		require.Regexp(t, regexp.MustCompile(`^[a-z2-7]{5}-[a-z2-7]{5}$`), rc)
		require.False(t, seen[rc], "recovery codes are distinct")
		seen[rc] = true
	}
	status, err = c.Auth2FAStatus(ctx)
	require.NoError(t, err)
	require.True(t, status.Enabled)

	// Recovery codes are stored hashed, never in clear.
	var stored int
	require.NoError(t, env.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM user_recovery_codes WHERE code_hash = ANY($1)`,
		[][]byte{[]byte(codes.RecoveryCodes[0]), []byte(strings.ReplaceAll(codes.RecoveryCodes[0], "-", ""))}).Scan(&stored))
	require.Zero(t, stored)

	// With 2FA on, neither a new secret nor a second confirmation is accepted.
	_, err = c.Auth2FAEnrollStart(ctx, api.Auth2FAEnrollStartParams{})
	requireAPIError(t, err, 409, "two_fa_enabled")
	_, err = c.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: code}, api.Auth2FAEnrollConfirmParams{})
	requireAPIError(t, err, 409, "two_fa_enabled")
}

func TestTwoFactorSignIn(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	public := env.Client(t, "")
	const email = "grace@example.com"
	secret, used, recovery := enrolTOTP(t, env.Client(t, env.SignUp(t, email).AccessToken))

	challenge := passwordStep(t, env, email)
	require.Equal(t, 300, challenge.ExpiresIn.Value)
	pending := challenge.PendingToken.Value
	mails := len(env.Mail.To(email))

	// The code that confirmed the enrolment is spent for its time step.
	_, err := public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: totpAt(t, secret, used)})
	requireAPIError(t, err, 401, "invalid_code")
	_, err = public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending + "x", Code: totpAt(t, secret, used)})
	requireAPIError(t, err, 401, "invalid_code")

	// The next step's code works (the current, previous and next steps are accepted) and signs in.
	next := totpAt(t, secret, used.Add(30*time.Second))
	pair, err := public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: next})
	require.NoError(t, err)
	sessions, err := env.Client(t, pair.AccessToken).AuthListSessions(ctx)
	require.NoError(t, err)
	require.Equal(t, "password", sessions[0].AuthProvider)
	require.Len(t, env.Mail.To(email), mails+1, "no further code is mailed; the new sign-in alert is")
	require.Contains(t, env.Mail.To(email)[mails].Subject, "New sign-in")

	// The pending token is single use.
	_, err = public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: recovery[0]})
	requireAPIError(t, err, 401, "invalid_code")

	// A TOTP code is single use within its step, even on a new sign-in.
	pending = passwordStep(t, env, email).PendingToken.Value
	_, err = public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: next})
	requireAPIError(t, err, 401, "invalid_code")

	// A recovery code works once, typed in any case and spacing.
	_, err = public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: " " + strings.ToUpper(recovery[0]) + " "})
	require.NoError(t, err)
	pending = passwordStep(t, env, email).PendingToken.Value
	_, err = public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: recovery[0]})
	requireAPIError(t, err, 401, "invalid_code")
	_, err = public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: strings.ReplaceAll(recovery[1], "-", "")})
	require.NoError(t, err)
}

func TestTwoFactorPendingTokenExpiresAndWearsOut(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	public := env.Client(t, "")
	const email = "alan@example.com"
	_, _, recovery := enrolTOTP(t, env.Client(t, env.SignUp(t, email).AccessToken))

	// Five wrong codes spend the pending token: the right code then no longer redeems it.
	pending := passwordStep(t, env, email).PendingToken.Value
	for range 5 {
		_, err := public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: "000000"})
		requireAPIError(t, err, 401, "invalid_code")
	}
	_, err := public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: recovery[0]})
	requireAPIError(t, err, 401, "invalid_code")

	// A pending token lives 300 seconds.
	pending = passwordStep(t, env, email).PendingToken.Value
	_, err = env.DB.Pool.Exec(ctx, `UPDATE auth_challenges SET expires_at = now() - interval '1 second' WHERE kind = 'two_fa' AND consumed_at IS NULL`)
	require.NoError(t, err)
	_, err = public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: recovery[0]})
	requireAPIError(t, err, 401, "invalid_code")

	// The recovery code tried on dead tokens is still unused.
	pending = passwordStep(t, env, email).PendingToken.Value
	_, err = public.Auth2FAVerifyLogin(ctx, &api.TwoFAVerifyRequest{PendingToken: pending, Code: recovery[0]})
	require.NoError(t, err)
}

func TestTwoFactorDisable(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	const email = "edsger@example.com"
	c := env.Client(t, env.SignUp(t, email).AccessToken)

	_, err := c.Auth2FADisable(ctx, &api.TwoFACodeRequest{Code: "123456"}, api.Auth2FADisableParams{})
	requireAPIError(t, err, 400, "two_fa_not_enabled")

	// Off with a recovery code.
	_, _, recovery := enrolTOTP(t, c)
	_, err = c.Auth2FADisable(ctx, &api.TwoFACodeRequest{Code: "aaaaa-aaaaa"}, api.Auth2FADisableParams{})
	requireAPIError(t, err, 400, "invalid_code")
	ok, err := c.Auth2FADisable(ctx, &api.TwoFACodeRequest{Code: recovery[3]}, api.Auth2FADisableParams{})
	require.NoError(t, err)
	require.True(t, ok.Ok)
	status, err := c.Auth2FAStatus(ctx)
	require.NoError(t, err)
	require.False(t, status.Enabled)
	env.SignIn(t, email, apitest.Password) // tokens straight after the emailed code again

	// Off with a TOTP code; the old recovery codes died with the first enrolment.
	secret, used, _ := enrolTOTP(t, c)
	_, err = c.Auth2FADisable(ctx, &api.TwoFACodeRequest{Code: recovery[4]}, api.Auth2FADisableParams{})
	requireAPIError(t, err, 400, "invalid_code")
	_, err = c.Auth2FADisable(ctx, &api.TwoFACodeRequest{Code: totpAt(t, secret, used.Add(30*time.Second))}, api.Auth2FADisableParams{})
	require.NoError(t, err)
	status, err = c.Auth2FAStatus(ctx)
	require.NoError(t, err)
	require.False(t, status.Enabled)
}

func TestTwoFactorAttemptsAreLimited(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	c := env.Client(t, env.SignUp(t, "kurt@example.com").AccessToken)

	// Per account: codes tried against one account.
	_, err := c.Auth2FAEnrollStart(ctx, api.Auth2FAEnrollStartParams{})
	require.NoError(t, err)
	for range 10 {
		_, err = c.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: "000000"}, api.Auth2FAEnrollConfirmParams{})
		requireAPIError(t, err, 400, "invalid_code")
	}
	_, err = c.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: "000000"}, api.Auth2FAEnrollConfirmParams{})
	requireAPIError(t, err, 429, "rate_limited")

	// Per source IP: pending tokens tried from one address.
	body := `{"pending_token":"forged.token","code":"000000"}`
	var last *http.Response
	for range 31 {
		last = env.Do(t, "POST", "/v1/auth/2fa/verify", "", strings.NewReader(body), http.Header{"Content-Type": {"application/json"}})
		if last.StatusCode != http.StatusUnauthorized {
			break
		}
	}
	require.Equal(t, http.StatusTooManyRequests, last.StatusCode)
	require.NotEmpty(t, last.Header.Get("Retry-After"))
}

func TestTwoFactorManagementIsSessionOnly(t *testing.T) {
	t.Parallel()
	env := apitest.New(t)
	ctx := context.Background()
	key := env.Client(t, env.Bootstrap(t, "acme").APIKey)
	_, err := key.Auth2FAStatus(ctx)
	requireAPIError(t, err, 403, "session_required")
	_, err = key.Auth2FAEnrollStart(ctx, api.Auth2FAEnrollStartParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = key.Auth2FAEnrollConfirm(ctx, &api.TwoFACodeRequest{Code: "123456"}, api.Auth2FAEnrollConfirmParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = key.Auth2FADisable(ctx, &api.TwoFACodeRequest{Code: "123456"}, api.Auth2FADisableParams{})
	requireAPIError(t, err, 403, "session_required")
	_, err = env.Client(t, "").Auth2FAStatus(ctx)
	requireAPIError(t, err, 401, "missing_credential")

	// The verify body is validated: both fields are required.
	resp := env.Do(t, "POST", "/v1/auth/2fa/verify", "", strings.NewReader(`{"code":"123456"}`), http.Header{"Content-Type": {"application/json"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
