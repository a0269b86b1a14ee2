package handlers

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/outflowhq/outflow/gen/api"
	dbq "github.com/outflowhq/outflow/gen/db"
	"github.com/outflowhq/outflow/internal/identity/accounts"
	"github.com/outflowhq/outflow/internal/identity/auth"
	"github.com/outflowhq/outflow/internal/identity/oidc"
	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
	"github.com/outflowhq/outflow/internal/platform/reqctx"
)

// Provider names: the path segment of each provider's operations, the provider of its identities and sessions.
const (
	providerApple  = "apple"
	providerGoogle = "google"
	providerOIDC   = "oidc"
)

// providerLabels name the providers to people; a configured OIDC provider name replaces its default.
var providerLabels = map[string]string{providerApple: "Apple", providerGoogle: "Google", providerOIDC: "Single sign-on"}

// Lifetimes of the browser flow's two server-side steps: the provider round trip, and the handoff code the
// web app trades for tokens (60 seconds, single use).
const (
	ssoStateTTL   = 10 * time.Minute
	ssoHandoffTTL = 60 * time.Second
)

// socialLimit bounds each social sign-in step per source IP; every step costs provider calls or writes.
var socialLimit = auth.Limit{Max: 30, Window: 10 * time.Minute}

// Social implements sign-in through Apple, Google and the deployment's OpenID Connect provider: native
// sign-in with an ID token a mobile app obtained, the browser flow (begin, provider callback, handoff
// exchange), and the public description of the sign-in options the configuration enables.
type Social struct {
	flows     *accounts.Flows
	cfg       config.Config
	providers map[string]*socialProvider
	// passkeys says whether this deployment can run passkey ceremonies (reported by GET /auth/config).
	passkeys bool
}

// socialProvider is one enabled provider and how this deployment asks it for an identity.
type socialProvider struct {
	label    string
	clientID string
	oidc     *oidc.Provider
	scopes   []string
	// formPost asks for response_mode=form_post: Apple requires it when the name or email scope is requested.
	formPost bool
}

// NewSocial builds the social sign-in handlers for the providers cfg enables; nothing is fetched from a
// provider until the first sign-in through it.
func NewSocial(flows *accounts.Flows, cfg config.Config, passkeysEnabled bool) *Social {
	client := oidc.NewHTTPClient()
	providers := map[string]*socialProvider{}
	add := func(name, label string, pc config.ProviderConfig, scopes []string, formPost bool, otherIssuers ...string) {
		if !pc.Enabled() {
			return
		}
		providers[name] = &socialProvider{label: label, clientID: pc.ClientID, scopes: scopes, formPost: formPost,
			oidc: oidc.New(oidc.Config{Issuer: pc.Issuer, ClientID: pc.ClientID, ClientSecret: pc.ClientSecret,
				OtherIssuers: otherIssuers, HTTPClient: client})}
	}
	var googleIssuers []string
	if cfg.Google.Issuer == "https://accounts.google.com" {
		googleIssuers = []string{"accounts.google.com"} // Google signs ID tokens with either form
	}
	add(providerGoogle, providerLabels[providerGoogle], cfg.Google, []string{"email", "profile"}, false, googleIssuers...)
	add(providerApple, providerLabels[providerApple], cfg.Apple, []string{"name", "email"}, true)
	add(providerOIDC, cmp.Or(cfg.OIDC.Name, providerLabels[providerOIDC]), cfg.OIDC, []string{"email", "profile"}, false)
	return &Social{flows: flows, cfg: cfg, providers: providers, passkeys: passkeysEnabled}
}

// AuthListProviders tells native apps which provider sign-ins are accepted and for which client id.
func (h *Social) AuthListProviders(ctx context.Context) (*api.AuthProviders, error) {
	status := func(name string) api.AuthProviderStatus {
		if p, ok := h.providers[name]; ok {
			return api.AuthProviderStatus{Enabled: true, ClientID: p.clientID}
		}
		return api.AuthProviderStatus{}
	}
	return &api.AuthProviders{Apple: status(providerApple), Google: status(providerGoogle)}, nil
}

// AuthGetConfig describes what a sign-in page offers on this deployment.
func (h *Social) AuthGetConfig(ctx context.Context) (*api.AuthConfig, error) {
	out := &api.AuthConfig{Providers: []api.AuthBrowserProvider{}, RegistrationEnabled: true,
		EmailVerificationRequired: h.cfg.RequireEmailVerification, CaptchaRequired: h.cfg.Captcha != "off",
		PasskeysEnabled: h.passkeys}
	if out.CaptchaRequired {
		out.CaptchaSiteKey = h.cfg.TurnstileSiteKey
	}
	for _, name := range []string{providerGoogle, providerApple, providerOIDC} {
		if _, ok := h.providers[name]; ok {
			out.Providers = append(out.Providers, api.AuthBrowserProvider(name))
		}
	}
	if p, ok := h.providers[providerOIDC]; ok {
		out.OidcDisplayName = api.NewOptString(p.label)
	}
	return out, nil
}

// AuthAppleSignIn signs in with an identity token from a native Apple sign-in.
func (h *Social) AuthAppleSignIn(ctx context.Context, req *api.AppleSignInRequest) (*api.LoginResult, error) {
	return h.native(ctx, providerApple, req.IdentityToken, req.FirstName.Or(""), req.LastName.Or(""))
}

// AuthGoogleSignIn signs in with an ID token from a native Google sign-in.
func (h *Social) AuthGoogleSignIn(ctx context.Context, req *api.GoogleSignInRequest) (*api.LoginResult, error) {
	return h.native(ctx, providerGoogle, req.IDToken, "", "")
}

// native verifies a provider's ID token against its published keys and completes the sign-in: no email code,
// since the provider verified the address.
func (h *Social) native(ctx context.Context, name, token, firstName, lastName string) (*api.LoginResult, error) {
	p, err := h.provider(name)
	if err != nil {
		return nil, err
	}
	if err := h.limit(ctx, "social-native"); err != nil {
		return nil, err
	}
	id, err := p.oidc.Verify(ctx, token, "")
	if err != nil {
		return nil, identityError(err)
	}
	var out accounts.SignIn
	var userID uuid.UUID
	err = db.WithTx(ctx, h.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		userID, err = h.resolve(ctx, tx, name, id, firstName, lastName)
		if err != nil {
			return err
		}
		out, err = h.flows.CompleteSignIn(ctx, tx, userID, name)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.Tokens != nil {
		h.flows.AlertSignIn(ctx, userID)
	}
	return LoginResultOf(out), nil
}

// AuthGoogleBegin starts a browser sign-in with Google.
func (h *Social) AuthGoogleBegin(ctx context.Context) (*api.AuthBrowserSignInStart, error) {
	return h.begin(ctx, providerGoogle)
}

// AuthAppleBegin starts a browser sign-in with Apple.
func (h *Social) AuthAppleBegin(ctx context.Context) (*api.AuthBrowserSignInStart, error) {
	return h.begin(ctx, providerApple)
}

// AuthOidcBegin starts a browser sign-in with the deployment's OpenID Connect provider.
func (h *Social) AuthOidcBegin(ctx context.Context) (*api.AuthBrowserSignInStart, error) {
	return h.begin(ctx, providerOIDC)
}

// ssoState is what the server keeps of a browser sign-in while the browser is at the provider.
type ssoState struct {
	Provider string `json:"provider"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	// BindingHash is the SHA-256 of the binding the begin call gave the browser.
	BindingHash string `json:"binding_hash"`
}

// ssoHandoff is what a handoff code redeems: the provider signed in with, and the browser it belongs to.
type ssoHandoff struct {
	Provider    string `json:"provider"`
	BindingHash string `json:"binding_hash"`
}

// begin keeps state, nonce and PKCE verifier server-side (the state sent to the provider is the signed handle
// of that row) and gives the browser the provider URL and a binding only it knows.
func (h *Social) begin(ctx context.Context, name string) (*api.AuthBrowserSignInStart, error) {
	p, err := h.provider(name)
	if err != nil {
		return nil, err
	}
	if err := h.limit(ctx, "sso-begin"); err != nil {
		return nil, err
	}
	if _, err := p.oidc.Metadata(ctx); err != nil {
		return nil, identityError(err)
	}
	binding, nonce := oidc.RandomToken(), oidc.RandomToken()
	verifier, challenge := oidc.NewPKCE()
	var state string
	err = db.WithTx(ctx, h.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		state, _, err = h.flows.Challenges.Create(ctx, tx, accounts.NewChallenge{Kind: accounts.ChallengeSSOState,
			Payload: ssoState{Provider: name, Nonce: nonce, Verifier: verifier, BindingHash: hashBinding(binding)},
			TTL:     ssoStateTTL})
		return err
	})
	if err != nil {
		return nil, err
	}
	raw, err := p.oidc.AuthCodeURL(ctx, oidc.AuthRequest{RedirectURI: h.redirectURI(name), State: state, Nonce: nonce,
		CodeChallenge: challenge, Scopes: p.scopes, FormPost: p.formPost})
	if err != nil {
		return nil, identityError(err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	return &api.AuthBrowserSignInStart{URL: *u, Binding: binding}, nil
}

// AuthGoogleCallback receives the browser back from Google.
func (h *Social) AuthGoogleCallback(ctx context.Context, params api.AuthGoogleCallbackParams) (*api.AuthGoogleCallbackFound, error) {
	loc, err := h.callback(ctx, providerGoogle, callbackAnswer{code: params.Code.Or(""), state: params.State.Or(""),
		refusal: params.Error.Or("")})
	if err != nil {
		return nil, err
	}
	return &api.AuthGoogleCallbackFound{Location: loc}, nil
}

// AuthOidcCallback receives the browser back from the OpenID Connect provider.
func (h *Social) AuthOidcCallback(ctx context.Context, params api.AuthOidcCallbackParams) (*api.AuthOidcCallbackFound, error) {
	loc, err := h.callback(ctx, providerOIDC, callbackAnswer{code: params.Code.Or(""), state: params.State.Or(""),
		refusal: params.Error.Or("")})
	if err != nil {
		return nil, err
	}
	return &api.AuthOidcCallbackFound{Location: loc}, nil
}

// AuthAppleCallbackPost receives Apple's form post.
func (h *Social) AuthAppleCallbackPost(ctx context.Context, req *api.AppleCallbackForm) (*api.AuthAppleCallbackPostFound, error) {
	first, last := appleUserName(req.User.Or(""))
	loc, err := h.callback(ctx, providerApple, callbackAnswer{code: req.Code.Or(""), state: req.State.Or(""),
		refusal: req.Error.Or(""), firstName: first, lastName: last})
	if err != nil {
		return nil, err
	}
	return &api.AuthAppleCallbackPostFound{Location: loc}, nil
}

// AuthAppleCallbackGet receives Apple's answer in the query string (a refusal, usually); a code arriving this
// way is handled like the form post.
func (h *Social) AuthAppleCallbackGet(ctx context.Context, params api.AuthAppleCallbackGetParams) (*api.AuthAppleCallbackGetFound, error) {
	loc, err := h.callback(ctx, providerApple, callbackAnswer{code: params.Code.Or(""), state: params.State.Or(""),
		refusal: params.Error.Or("")})
	if err != nil {
		return nil, err
	}
	return &api.AuthAppleCallbackGetFound{Location: loc}, nil
}

// callbackAnswer is what the provider sent the browser back with.
type callbackAnswer struct {
	code, state, refusal string
	// firstName and lastName come from Apple's `user` form field, sent only on the first consent.
	firstName, lastName string
}

// appleUserName reads the name from Apple's `user` form field: {"name": {"firstName", "lastName"}, "email"}.
func appleUserName(raw string) (first, last string) {
	var u struct {
		Name struct {
			FirstName string `json:"firstName"`
			LastName  string `json:"lastName"`
		} `json:"name"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &u) != nil {
		return "", ""
	}
	return u.Name.FirstName, u.Name.LastName
}

// SSO error codes the web app receives as `sso_error` when a browser sign-in ends without a handoff code.
const (
	ssoErrDisabled     = "provider_disabled"
	ssoErrDenied       = "access_denied"
	ssoErrState        = "invalid_state"
	ssoErrVerification = "verification_failed"
	ssoErrUnavailable  = "provider_unavailable"
	ssoErrEmail        = "email_unverified"
	ssoErrServer       = "server_error"
)

// callback spends the state (a provider answer is accepted once), redeems the code with the PKCE verifier,
// verifies the ID token and its nonce, signs the identity in (linking or creating the account) and hands the
// web app a single-use code valid ssoHandoffTTL. Only a rate limit is an HTTP error: every other outcome is a
// redirect to the web app, since a browser is on the other end.
func (h *Social) callback(ctx context.Context, name string, a callbackAnswer) (string, error) {
	if err := h.limit(ctx, "sso-callback"); err != nil {
		return "", err
	}
	p, ok := h.providers[name]
	if !ok {
		return h.ssoFailure(ssoErrDisabled), nil
	}
	var st ssoState
	var stateErr error
	if a.state == "" {
		stateErr = accounts.ErrChallengeInvalid
	} else {
		stateErr = db.WithTx(ctx, h.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
			r, err := h.flows.Challenges.Redeem(ctx, h.flows.Pool, tx, a.state, accounts.ChallengeSSOState, "")
			if err != nil {
				return err
			}
			return json.Unmarshal(r.Payload, &st)
		})
	}
	switch {
	case a.refusal != "":
		return h.ssoFailure(ssoErrDenied), nil
	case errors.Is(stateErr, accounts.ErrChallengeInvalid) || (stateErr == nil && st.Provider != name):
		return h.ssoFailure(ssoErrState), nil
	case stateErr != nil:
		return h.ssoServerError(ctx, stateErr), nil
	}
	id, err := p.oidc.Redeem(ctx, a.code, h.redirectURI(name), st.Verifier, st.Nonce)
	if err != nil {
		h.flows.Logger.InfoContext(ctx, "browser sign-in not verified", slog.String("provider", name), slog.String("error", err.Error()))
		if errors.Is(err, oidc.ErrRejected) {
			return h.ssoFailure(ssoErrVerification), nil
		}
		return h.ssoFailure(ssoErrUnavailable), nil
	}
	var handoff string
	err = db.WithTx(ctx, h.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		userID, err := h.resolve(ctx, tx, name, id, a.firstName, a.lastName)
		if err != nil {
			return err
		}
		handoff, _, err = h.flows.Challenges.Create(ctx, tx, accounts.NewChallenge{Kind: accounts.ChallengeSSOHandoff,
			UserID: userID, Payload: ssoHandoff{Provider: name, BindingHash: st.BindingHash}, TTL: ssoHandoffTTL})
		return err
	})
	if errors.Is(err, errEmailUnverified) {
		return h.ssoFailure(ssoErrEmail), nil
	}
	if err != nil {
		return h.ssoServerError(ctx, err), nil
	}
	return h.cfg.AppURL + "/auth/sso?code=" + url.QueryEscape(handoff), nil
}

func (h *Social) ssoFailure(code string) string {
	return h.cfg.AppURL + "/auth/login?sso_error=" + code
}

func (h *Social) ssoServerError(ctx context.Context, err error) string {
	h.flows.Logger.ErrorContext(ctx, "browser sign-in failed", slog.String("error", err.Error()))
	return h.ssoFailure(ssoErrServer)
}

// errWrongBrowser refuses a handoff code presented without the binding of the browser that began the sign-in.
var errWrongBrowser = apierror.Unauthorized("sso_wrong_browser",
	"This sign-in was started in another browser. Start it again here.")

// AuthSSOExchange trades the callback's handoff code, with the browser binding, for tokens or the 2FA challenge.
func (h *Social) AuthSSOExchange(ctx context.Context, req *api.SSOExchangeRequest) (*api.LoginResult, error) {
	if err := h.limit(ctx, "sso-exchange"); err != nil {
		return nil, err
	}
	var out accounts.SignIn
	var userID uuid.UUID
	err := db.WithTx(ctx, h.flows.Pool, func(ctx context.Context, tx pgx.Tx) error {
		r, err := h.flows.Challenges.Redeem(ctx, h.flows.Pool, tx, req.Code, accounts.ChallengeSSOHandoff, "")
		if err != nil {
			return err
		}
		var ho ssoHandoff
		if err := json.Unmarshal(r.Payload, &ho); err != nil {
			return err
		}
		// A wrong binding rolls the redemption back: the code stays usable by the browser it belongs to.
		if subtle.ConstantTimeCompare([]byte(hashBinding(req.Binding)), []byte(ho.BindingHash)) != 1 {
			return errWrongBrowser
		}
		userID = r.UserID
		out, err = h.flows.CompleteSignIn(ctx, tx, r.UserID, ho.Provider)
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.Tokens != nil {
		h.flows.AlertSignIn(ctx, userID)
	}
	return LoginResultOf(out), nil
}

// AuthOidcExchange is AuthSSOExchange under its earlier name.
func (h *Social) AuthOidcExchange(ctx context.Context, req *api.SSOExchangeRequest) (*api.LoginResult, error) {
	return h.AuthSSOExchange(ctx, req)
}

// errEmailUnverified refuses a new identity whose provider did not vouch for an email address: without one
// there is no account to link and no address to create one with.
var errEmailUnverified = apierror.Unauthorized("email_unverified",
	"The identity provider did not confirm an email address for this account, so it cannot sign in here.")

// resolve returns the user an identity signs in: the one it is linked to; else the account registered with
// the verified email it asserts (linking it, since the provider proved control of that address); else a new
// account (user, organization, trial) created with that verified email.
func (h *Social) resolve(ctx context.Context, tx pgx.Tx, provider string, id oidc.Identity, firstName, lastName string) (uuid.UUID, error) {
	q := dbq.New()
	link := func(userID uuid.UUID) (uuid.UUID, error) {
		return userID, q.IdentityLink(ctx, tx, dbq.IdentityLinkParams{Provider: provider, Subject: id.Subject,
			UserID: userID, Email: id.Email})
	}
	known, err := q.IdentityGet(ctx, tx, dbq.IdentityGetParams{Provider: provider, Subject: id.Subject})
	if err == nil {
		return link(known.UserID)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, err
	}
	email, ok := verifiedEmail(id)
	if !ok {
		return uuid.Nil, errEmailUnverified
	}
	user, err := q.UserGetByEmail(ctx, tx, email)
	if err == nil {
		if err := q.UserMarkEmailVerified(ctx, tx, user.ID); err != nil {
			return uuid.Nil, err
		}
		return link(user.ID)
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, err
	}
	userID, _, err := accounts.CreateAccount(ctx, tx, accounts.NewAccount{Email: email, Verified: true,
		FirstName: profileName(firstName, id.GivenName), LastName: profileName(lastName, id.FamilyName)})
	if errors.Is(err, accounts.ErrEmailTaken) {
		return uuid.Nil, apierror.Conflict("sign_in_conflict", "This account was created by another sign-in at the same moment. Try again.")
	}
	if err != nil {
		return uuid.Nil, err
	}
	return link(userID)
}

// verifiedEmail returns the identity's email when the provider verified it and it is a plain address.
func verifiedEmail(id oidc.Identity) (string, bool) {
	if !id.EmailVerified || id.Email == "" || len(id.Email) > 320 {
		return "", false
	}
	addr, err := mail.ParseAddress(id.Email)
	if err != nil || addr.Address != id.Email {
		return "", false
	}
	return id.Email, true
}

// profileName picks the first non-empty name and fits it to the profile's 50-character limit.
func profileName(candidates ...string) string {
	for _, c := range candidates {
		if c = strings.TrimSpace(c); c != "" {
			r := []rune(c)
			if len(r) > 50 {
				r = r[:50]
			}
			return string(r)
		}
	}
	return ""
}

// provider returns an enabled provider, or the 503 a deployment without it answers.
func (h *Social) provider(name string) (*socialProvider, error) {
	p, ok := h.providers[name]
	if !ok {
		return nil, apierror.Unavailable("provider_disabled",
			fmt.Sprintf("%s sign-in is not configured on this deployment.", providerLabels[name]))
	}
	return p, nil
}

func (h *Social) limit(ctx context.Context, step string) error {
	return h.flows.Limiter.Allow(ctx, step+":ip:"+reqctx.From(ctx).ClientIP, socialLimit)
}

// redirectURI is the callback registered with the provider; the API serves it.
func (h *Social) redirectURI(name string) string {
	return h.cfg.PublicURL + "/v1/auth/" + name + "/callback"
}

// hashBinding is how a browser binding is stored: only the browser holds the value itself.
func hashBinding(binding string) string {
	sum := sha256.Sum256([]byte(binding))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// identityError maps a provider failure: an unverifiable identity is a 401, an unreachable provider a 503.
func identityError(err error) error {
	if errors.Is(err, oidc.ErrRejected) {
		return apierror.Unauthorized("invalid_identity_token",
			"The identity token is invalid, expired or issued for another client.").WithCause(err)
	}
	return apierror.Unavailable("provider_unavailable",
		"The identity provider could not be reached. Try again in a moment.").WithCause(err)
}
